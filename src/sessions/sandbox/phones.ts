import { conflict, invalidInput, notFound } from '../../domain/errors.js';
import type { SessionEventData } from '../../domain/session/events.js';
import type { Clock } from '../../infra/clock.js';
import type { IdGenerator } from '../../infra/ids.js';
import { DuplicateKeyError } from '../../infra/docstore/port.js';
import type { ProfileSnapshot } from '../port.js';
import { requirePhone, requirePhones, userJid } from './addresses.js';
import type { CreatePhoneInput } from './schemas.js';
import { DURABLE, type PhoneDoc, type SandboxState } from './state.js';

/** The simulated accounts: each owned by one gateway account, which alone may see and drive it. */
export class Phones {
  constructor(
    private readonly state: SandboxState,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
  ) {}

  /** A LID as the network makes them: 15 digits, no relation to the phone number. */
  private newLid(): string {
    const digits = [...this.ids.bytes(15)].map((b) => String(b % 10)).join('');
    return `${digits.startsWith('0') ? `1${digits.slice(1)}` : digits}@lid`;
  }

  async create(accountId: string, input: CreatePhoneInput): Promise<PhoneDoc> {
    const phone = requirePhone('phone', input.phone);
    const pushName = typeof input.push_name === 'string' ? input.push_name.trim() : '';
    if (pushName === '') throw invalidInput('push_name', 'must not be empty');
    if (input.business !== undefined && !(typeof input.business.name === 'string' && input.business.name.trim() !== '')) {
      throw invalidInput('business.name', 'must not be empty');
    }
    const contacts = requirePhones('contacts', input.contacts ?? []).filter((c) => c !== phone);
    const doc: PhoneDoc = {
      _id: phone,
      account_id: accountId,
      jid: userJid(phone),
      push_name: pushName,
      contacts,
      created_at: this.clock.now().toISOString(),
      lid: this.newLid(),
      addressing: input.addressing ?? 'pn',
    };
    if (input.about !== undefined) doc.about = input.about;
    if (input.restricted === true) doc.restricted = true;
    if (input.send_timeouts) doc.send_timeouts = input.send_timeouts;
    if (input.business !== undefined) doc.business = input.business;
    try {
      await this.state.phones.insertOne(doc, DURABLE);
    } catch (error) {
      if (error instanceof DuplicateKeyError) throw conflict(`phone ${phone} already exists in the sandbox`);
      throw error;
    }
    return doc;
  }

  /** The caller's phone; anyone else's is indistinguishable from a missing one. */
  async owned(accountId: string, phone: unknown, field = 'phone'): Promise<PhoneDoc> {
    const digits = requirePhone(field, phone);
    const doc = await this.state.phones.findOne({ _id: digits });
    if (!doc || doc.account_id !== accountId) throw notFound(`sandbox phone ${digits} not found`);
    return doc;
  }

  async ownedMany(accountId: string, phones: string[], field: string): Promise<PhoneDoc[]> {
    const docs = await this.byIds(requirePhones(field, phones));
    for (const phone of phones) {
      const doc = docs.get(phone);
      if (!doc || doc.account_id !== accountId) throw notFound(`sandbox phone ${phone} not found`);
    }
    return phones.map((p) => docs.get(p)!);
  }

  async byIds(phones: string[]): Promise<Map<string, PhoneDoc>> {
    if (phones.length === 0) return new Map();
    const docs = await this.state.phones.find({ _id: { $in: [...new Set(phones)] } });
    return new Map(docs.map((d) => [d._id, d]));
  }
}

export function profileSnapshot(doc: PhoneDoc): ProfileSnapshot {
  return { phone: doc._id, jid: doc.jid, ...profileFields(doc) };
}

/** ProfileUpdated carries the same fields as the snapshot, minus the identity. */
export function profileFields(doc: PhoneDoc): SessionEventData<'ProfileUpdated'> {
  const out: SessionEventData<'ProfileUpdated'> = { push_name: doc.push_name };
  if (doc.about !== undefined) out.about = doc.about;
  const b = doc.business;
  if (!b) return out;
  out.business_name = b.name;
  if (b.verified_name !== undefined) out.verified_name = b.verified_name;
  const business: NonNullable<SessionEventData<'ProfileUpdated'>['business']> = {};
  if (b.business_hours_timezone !== undefined) business.business_hours_timezone = b.business_hours_timezone;
  if (b.categories !== undefined) business.categories = b.categories;
  if (b.profile_options !== undefined) business.profile_options = b.profile_options;
  if (b.address !== undefined) business.address = b.address;
  if (b.email !== undefined) business.email = b.email;
  if (b.website !== undefined) business.website = b.website;
  out.business = business;
  return out;
}
