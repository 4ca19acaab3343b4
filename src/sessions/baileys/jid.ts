import { isHostedLidUser, isHostedPnUser, isJidGroup, isLidUser, isPnUser, jidDecode, jidNormalizedUser, toNumber } from '@whiskeysockets/baileys';

/** Identity helpers shared by the translators: jids without device suffix, LID vs phone number. */

/** `5511...:12@s.whatsapp.net` → `5511...@s.whatsapp.net`; empty or absent → undefined. */
export function normalizeJid(jid: string | null | undefined): string | undefined {
  if (!jid) return undefined;
  return jidNormalizedUser(jid) || undefined;
}

export const isLid = (jid: string | null | undefined): boolean => !!jid && !!(isLidUser(jid) || isHostedLidUser(jid));
export const isPhoneJid = (jid: string | null | undefined): boolean => !!jid && !!(isPnUser(jid) || isHostedPnUser(jid));
export const isGroupJid = (jid: string | null | undefined): boolean => !!jid && !!isJidGroup(jid);

/** The user part of a jid: the phone digits for a phone-number jid. */
export function jidUser(jid: string): string | undefined {
  return jidDecode(jid)?.user;
}

/** The two identities WhatsApp may give one person: their LID and their phone-number jid. */
export interface Identity {
  /** The jid the network addressed them by (LID or phone number). */
  jid: string;
  pn?: string;
  lid?: string;
}

/** Sorts a primary jid and its alternate (Baileys' `*Alt` fields) into phone number and LID. */
export function identityOf(primary: string, alternate?: string | null): Identity {
  const jid = normalizeJid(primary) ?? primary;
  const alt = normalizeJid(alternate);
  const identity: Identity = { jid };
  for (const candidate of [jid, alt]) {
    if (!candidate) continue;
    if (isLid(candidate)) identity.lid ??= candidate;
    else if (isPhoneJid(candidate)) identity.pn ??= candidate;
  }
  return identity;
}

/** Protobuf integers (timestamps, sizes) arrive as number, Long or null. */
export type ProtoInt = Parameters<typeof toNumber>[0];

/** A protobuf integer as a JS integer (Long → number); null or absent → undefined. */
export function toInt(value: ProtoInt): number | undefined {
  if (value === null || value === undefined) return undefined;
  const n = toNumber(value);
  return Number.isFinite(n) ? Math.trunc(n) : undefined;
}

export function base64(bytes: Uint8Array | null | undefined): string | undefined {
  if (!bytes || bytes.length === 0) return undefined;
  return Buffer.from(bytes).toString('base64');
}

