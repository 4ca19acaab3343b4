import { invalidInput } from '../../domain/errors.js';

/** Phone numbers are digits with country code, as the network's user jids carry them. */
const PHONE = /^\d{8,15}$/;
const USER_SUFFIX = '@s.whatsapp.net';
const GROUP_SUFFIX = '@g.us';
const GROUP_ID = /^[0-9]{6,40}(-[0-9]{6,20})?$/;

export const userJid = (phone: string) => `${phone}${USER_SUFFIX}`;
export const isPhone = (value: unknown): value is string => typeof value === 'string' && PHONE.test(value);

/** Who a message, presence or chat is addressed to. */
export type Address = { kind: 'phone'; phone: string; jid: string } | { kind: 'group'; jid: string };

export function requirePhone(field: string, value: unknown): string {
  if (!isPhone(value)) throw invalidInput(field, 'must be 8 to 15 digits with country code');
  return value;
}

export function requirePhones(field: string, values: unknown): string[] {
  if (!Array.isArray(values)) throw invalidInput(field, 'must be a list of phone numbers');
  const phones = values.map((v, i) => requirePhone(`${field}.${i}`, v));
  if (new Set(phones).size !== phones.length) throw invalidInput(field, 'lists a phone twice');
  return phones;
}

/** A group jid, or its bare id. */
export function requireGroupJid(field: string, value: unknown): string {
  const id = typeof value === 'string' && value.endsWith(GROUP_SUFFIX) ? value.slice(0, -GROUP_SUFFIX.length) : value;
  if (typeof id !== 'string' || !GROUP_ID.test(id)) throw invalidInput(field, 'must be a group jid (<id>@g.us)');
  return `${id}${GROUP_SUFFIX}`;
}

/** Digits, a user jid (`<digits>@s.whatsapp.net`, device suffix allowed) or a group jid. */
export function parseAddress(field: string, value: unknown): Address {
  if (typeof value !== 'string') throw invalidInput(field, 'must be a phone number or a jid');
  if (value.endsWith(GROUP_SUFFIX)) return { kind: 'group', jid: requireGroupJid(field, value) };
  const user = value.endsWith(USER_SUFFIX) ? value.slice(0, -USER_SUFFIX.length).split(':')[0] : value;
  const phone = requirePhone(field, user);
  return { kind: 'phone', phone, jid: userJid(phone) };
}

export const unixSeconds = (date: Date) => Math.floor(date.getTime() / 1000);
