import { invalidInput, notFound } from '../../domain/errors.js';
import { PRIVACY_SETTINGS, PRIVACY_VALUES, type PrivacySetting } from '../../domain/session/account-events.js';
import type { SessionEvent } from '../../domain/session/events.js';
import type { Clock } from '../../infra/clock.js';
import type { Update } from '../../infra/docstore/port.js';
import type { IdGenerator } from '../../infra/ids.js';
import type { ContactProfile, NetworkLabel, PrivacyValues, StatusContent } from '../account-port.js';
import { parseAddress, unixSeconds, userJid } from './addresses.js';
import type { MediaStore } from './media-store.js';
import type { Numbers } from './numbers.js';
import { profileFields, type Phones } from './phones.js';
import type { Pictures } from './pictures.js';
import type { Registry } from './registry.js';
import { DURABLE, type PhoneDoc, type SandboxState } from './state.js';
import { STATUS_BROADCAST } from './status-posts.js';

/** Where the network starts every account's privacy. */
export const DEFAULT_PRIVACY: Record<PrivacySetting, string> = {
  last_seen: 'all',
  online: 'all',
  profile_picture: 'all',
  about: 'all',
  groups: 'all',
  read_receipts: 'all',
};

/** The labels a business account starts with (SANDBOX.md). */
export const DEFAULT_LABELS: NetworkLabel[] = [
  { id: '1', name: 'New customer', color: 0 },
  { id: '2', name: 'New order', color: 1 },
  { id: '3', name: 'Pending payment', color: 2 },
  { id: '4', name: 'Paid', color: 3 },
];

const PUSH_NAME_MAX = 25;
const ABOUT_MAX = 139;

/** The account's privacy, defaults filled in. */
export const privacyOf = (phone: PhoneDoc): Record<PrivacySetting, string> => ({ ...DEFAULT_PRIVACY, ...(phone.privacy as Partial<Record<PrivacySetting, string>>) });
export const labelsOf = (phone: PhoneDoc): NetworkLabel[] => (phone.business ? (phone.labels ?? DEFAULT_LABELS) : []);

/** Whether `viewer` may see what `owner`'s setting guards. */
function visible(setting: string, owner: PhoneDoc, viewer: PhoneDoc): boolean {
  if (owner.blocked?.includes(viewer._id)) return false;
  if (setting === 'all') return true;
  if (setting === 'contacts' || setting === 'contact_blacklist') return owner.contacts.includes(viewer._id);
  return false;
}

/**
 * The account's own settings on the sandbox (SANDBOX.md, "What phones see of what instances do"):
 * name, about, picture, block list, privacy, labels and status posts, kept on the phone's record
 * where `GET /sandbox/accounts/{phone}` shows them, and seen by others as the network shows them.
 */
export class AccountAdmin {
  constructor(
    private readonly state: SandboxState,
    private readonly phones: Phones,
    private readonly numbers: Numbers,
    private readonly pictures: Pictures,
    private readonly media: MediaStore,
    private readonly registry: Registry,
    private readonly ids: IdGenerator,
    private readonly clock: Clock,
  ) {}

  async setName(me: PhoneDoc, name: string): Promise<void> {
    const pushName = name.trim();
    if (pushName === '' || pushName.length > PUSH_NAME_MAX) throw invalidInput('push_name', `must be 1 to ${PUSH_NAME_MAX} characters`);
    await this.set(me, { push_name: pushName });
  }

  async setAbout(me: PhoneDoc, about: string): Promise<void> {
    if (about.length > ABOUT_MAX) throw invalidInput('about', `must be at most ${ABOUT_MAX} characters`);
    await this.set(me, { about });
  }

  async setPicture(me: PhoneDoc, jpeg: Buffer): Promise<string> {
    const id = await this.pictures.store(me.account_id, jpeg);
    await this.set(me, { picture_id: id });
    return id;
  }

  async removePicture(me: PhoneDoc): Promise<void> {
    await this.state.phones.updateOne({ _id: me._id }, { $unset: { picture_id: '' } }, DURABLE);
  }

  /** What the network shows `viewer` of another account: a number not on it is 404. */
  async contactProfile(viewer: PhoneDoc, jid: string): Promise<ContactProfile> {
    const address = parseAddress('jid', jid);
    if (address.kind !== 'phone') throw invalidInput('jid', 'must be a person, not a group');
    const check = await this.numbers.check(viewer, address.phone);
    if (!check.exists) throw notFound(`${address.phone} is not on WhatsApp`);
    const phone = check.jid.slice(0, check.jid.indexOf('@'));
    const other = (await this.phones.byIds([phone])).get(phone)!;
    const privacy = privacyOf(other);
    const fields = profileFields(other);
    const out: ContactProfile = { jid: other.jid, phone: other._id, push_name: other.push_name };
    if (other.lid) out.lid = other.lid;
    if (other.about !== undefined && visible(privacy.about, other, viewer)) out.about = other.about;
    if (other.picture_id && visible(privacy.profile_picture, other, viewer)) out.picture_url = this.pictures.url(other.picture_id);
    if (fields.business_name !== undefined) out.business_name = fields.business_name;
    if (fields.business !== undefined) out.business = fields.business;
    return out;
  }

  async block(me: PhoneDoc, jid: string, blocked: boolean): Promise<void> {
    const address = parseAddress('phone', jid);
    if (address.kind !== 'phone') throw invalidInput('phone', 'a group cannot be blocked');
    if (address.phone === me._id) throw invalidInput('phone', 'an account cannot block itself');
    const check = await this.numbers.check(me, address.phone);
    if (!check.exists) throw invalidInput('phone', `${address.phone} is not on WhatsApp`);
    const phone = check.jid.slice(0, check.jid.indexOf('@'));
    const update: Update = blocked ? { $addToSet: { blocked: phone } } : { $pull: { blocked: phone } };
    await this.state.phones.updateOne({ _id: me._id }, update, DURABLE);
  }

  blocklist(me: PhoneDoc): string[] {
    return (me.blocked ?? []).map(userJid);
  }

  privacy(me: PhoneDoc): PrivacyValues {
    return privacyOf(me);
  }

  async setPrivacy(me: PhoneDoc, setting: PrivacySetting, value: string): Promise<void> {
    if (!PRIVACY_SETTINGS.includes(setting)) throw invalidInput('privacy', `unknown setting ${String(setting)}`);
    if (!PRIVACY_VALUES[setting].includes(value)) throw invalidInput(setting, `must be one of ${PRIVACY_VALUES[setting].join(', ')}`);
    await this.state.phones.updateOne({ _id: me._id }, { $set: { [`privacy.${setting}`]: value } }, DURABLE);
  }

  async labelChat(me: PhoneDoc, chat: string, labelId: string, labeled: boolean): Promise<void> {
    if (!me.business) throw invalidInput('label_id', 'labels are for business accounts');
    if (!labelsOf(me).some((l) => l.id === labelId)) throw invalidInput('label_id', `no label ${labelId} on this account`);
    const jid = parseAddress('phone', chat).jid;
    const entry = { chat: jid, label_id: labelId };
    await this.state.phones.updateOne({ _id: me._id }, labeled ? { $addToSet: { chat_labels: entry } } : { $pull: { chat_labels: entry } }, DURABLE);
  }

  /**
   * A status post: stored where the recipients' phones see it, and handed to their linked
   * instances on status@broadcast, as a phone's own post is.
   */
  async postStatus(me: PhoneDoc, content: StatusContent): Promise<{ message_id: string; recipients: string[]; timestamp_s: number }> {
    const given = content.recipients;
    const phones: string[] = [];
    for (const [i, person] of (given ?? me.contacts).entries()) {
      const address = parseAddress(`recipients.${i}`, person);
      if (address.kind !== 'phone') throw invalidInput(`recipients.${i}`, 'must be a person, not a group');
      const check = await this.numbers.check(me, address.phone);
      if (!check.exists) {
        // The account's own contact list may name numbers that left; a named recipient must exist.
        if (given) throw invalidInput(`recipients.${i}`, `${address.phone} is not on WhatsApp`);
        continue;
      }
      const phone = check.jid.slice(0, check.jid.indexOf('@'));
      if (phone !== me._id && !phones.includes(phone)) phones.push(phone);
    }
    if (phones.length === 0) throw invalidInput('recipients', 'nobody would see the post: give recipients, or add contacts to the account');
    // Those who blocked the account never see its posts (the network does not say so to the poster).
    const seeing = [...(await this.phones.byIds(phones)).values()].filter((p) => !p.blocked?.includes(me._id)).map((p) => p._id);
    const now = this.clock.now();
    const id = `3EB0${this.ids.alphanumeric(16)}`;
    const stored = content.media
      ? await this.media.upload(me.account_id, {
          kind: content.media.kind,
          mimetype: content.media.mimetype,
          data_base64: content.media.bytes.toString('base64'),
          ...(content.media.caption === undefined ? {} : { caption: content.media.caption }),
        })
      : undefined;
    await this.state.statuses.insertOne(
      {
        _id: id,
        account_id: me.account_id,
        from: me._id,
        recipients: seeing,
        ...(content.text === undefined ? {} : { text: content.text }),
        ...(stored ? { media: { kind: stored.kind, mimetype: stored.mimetype, file_length: stored.file_length, ...(stored.caption === undefined ? {} : { caption: stored.caption }) } } : {}),
        ...(content.background_color === undefined ? {} : { background_color: content.background_color }),
        ...(content.font === undefined ? {} : { font: content.font }),
        posted_at: now.toISOString(),
      },
      DURABLE,
    );
    const message = {
      id,
      chat: STATUS_BROADCAST,
      sender: me.jid,
      from_me: false,
      is_group: false,
      push_name: me.push_name,
      timestamp_s: unixSeconds(now),
      ...(stored ? { type: 'media' as const, media: stored } : { type: 'text' as const, text: content.text ?? '' }),
    };
    const event: SessionEvent = { type: 'MessageReceived', data: { message, upsert: 'notify' } };
    for (const phone of seeing) await this.registry.toPhone(phone, [event]);
    return { message_id: id, recipients: phones.map(userJid), timestamp_s: unixSeconds(now) };
  }

  private async set(me: PhoneDoc, fields: Partial<PhoneDoc>): Promise<void> {
    await this.state.phones.updateOne({ _id: me._id }, { $set: fields }, DURABLE);
  }
}
