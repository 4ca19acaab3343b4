import sharp from 'sharp';
import type { CommandContext } from '../domain/audit.js';
import { DomainError, invalidInput } from '../domain/errors.js';
import { PRIVACY_SETTINGS, PRIVACY_VALUES, type PrivacySetting } from '../domain/session/account-events.js';
import type { SessionEvent } from '../domain/session/events.js';
import { toJid } from '../domain/session/phone-numbers.js';
import type { ContactQueries } from '../projections/contacts/contact-queries.js';
import type { InstanceDoc } from '../projections/instances/instances-projection.js';
import type { ContactProfile, PrivacyValues, StatusContent } from '../sessions/account-port.js';
import { onNetwork } from '../sessions/network-call.js';
import type { SessionManager } from '../sessions/session-manager.js';
import { pictureJpeg } from './pictures.js';
import type { ReadYourWrites } from './read-your-writes.js';

export const PUSH_NAME_MAX = 25;
export const ABOUT_MAX = 139;
export const STATUS_TEXT_MAX = 700;
/** Status media is sent as the network's image or video message; kept small enough to go in one request. */
export const STATUS_MEDIA_MAX_BYTES = 16 * 1024 * 1024;

export interface StatusRequest {
  text?: string;
  media?: { data: string; mimetype?: string };
  background_color?: string;
  font?: number;
  recipients?: string[];
}

/**
 * The account's own settings (CONTRACT.md, "Groups, contacts, profile, privacy, labels, status
 * posts"): profile, block list, privacy, labels on chats, status posts. Checked whole before the
 * first network call; each change recorded with the caller as actor once the network took it.
 */
export class AccountSettingsCommands {
  constructor(
    private readonly manager: SessionManager,
    private readonly contacts: ContactQueries,
    private readonly rw: ReadYourWrites,
  ) {}

  async updateProfile(instance: InstanceDoc, patch: { push_name?: string; about?: string }, context: CommandContext): Promise<void> {
    const name = patch.push_name?.trim();
    if (name !== undefined && (name === '' || name.length > PUSH_NAME_MAX)) throw invalidInput('push_name', `must be 1 to ${PUSH_NAME_MAX} characters`);
    if (patch.about !== undefined && patch.about.length > ABOUT_MAX) throw invalidInput('about', `must be at most ${ABOUT_MAX} characters`);
    if (name === undefined && patch.about === undefined) throw invalidInput('push_name', 'change push_name, about, or both');
    let position: bigint | null = null;
    if (name !== undefined) {
      await onNetwork(this.manager, instance._id, (c) => c.account.updateProfileName(name));
      position = await this.record(instance, [{ type: 'ProfileUpdated', data: { push_name: name } }], context);
    }
    if (patch.about !== undefined) {
      const about = patch.about;
      await onNetwork(this.manager, instance._id, (c) => c.account.updateProfileStatus(about));
      position = await this.record(instance, [{ type: 'ProfileUpdated', data: { about } }], context);
    }
    await this.rw.settle(position, ['sessions', 'instances']);
  }

  async setPicture(instance: InstanceDoc, media: { data: string }, context: CommandContext): Promise<string> {
    const jpeg = await pictureJpeg(media);
    const picture = await onNetwork(this.manager, instance._id, (c) => c.account.updateProfilePicture(jpeg));
    const position = await this.record(instance, [{ type: 'ProfileUpdated', data: { picture_id: picture.id, picture_url: picture.url ?? '' } }], context);
    await this.rw.settle(position, ['sessions']);
    return picture.id;
  }

  async removePicture(instance: InstanceDoc, context: CommandContext): Promise<void> {
    await onNetwork(this.manager, instance._id, (c) => c.account.removeProfilePicture());
    // Empty, not absent: the status shows no picture from here on.
    const position = await this.record(instance, [{ type: 'ProfileUpdated', data: { picture_id: '', picture_url: '' } }], context);
    await this.rw.settle(position, ['sessions']);
  }

  /** The network's view of the person, with what the account already knows of them. */
  async contact(instance: InstanceDoc, jid: string): Promise<ContactProfile> {
    const address = toJid(jid);
    if (address.endsWith('@g.us') || address.endsWith('@broadcast')) throw invalidInput('jid', 'must be a person (phone number, user jid or LID)');
    const profile = await onNetwork(this.manager, instance._id, (c) => c.account.contactProfile(address));
    const known = await this.contacts.byJid(instance._id, profile.jid);
    return {
      ...profile,
      ...(profile.lid === undefined && known?.lid ? { lid: known.lid } : {}),
      ...(profile.push_name === undefined && known?.push_name ? { push_name: known.push_name } : {}),
    };
  }

  async block(instance: InstanceDoc, phone: string, blocked: boolean, context: CommandContext): Promise<void> {
    const jid = toJid(phone);
    if (!jid.endsWith('@s.whatsapp.net') && !jid.endsWith('@lid')) throw invalidInput('phone', 'must be a person (phone number, user jid or LID)');
    await onNetwork(this.manager, instance._id, (c) => c.account.updateBlockStatus(jid, blocked));
    const position = await this.record(instance, [{ type: 'BlocklistUpdated', data: { action: blocked ? 'block' : 'unblock', jids: [jid] } }], context);
    await this.rw.settle(position, ['contacts']);
  }

  blocklist(instance: InstanceDoc): Promise<string[]> {
    return onNetwork(this.manager, instance._id, (c) => c.account.fetchBlocklist());
  }

  privacy(instance: InstanceDoc): Promise<PrivacyValues> {
    return onNetwork(this.manager, instance._id, (c) => c.account.fetchPrivacy());
  }

  /** Values outside the network's list for a setting are 400 and change nothing. */
  async updatePrivacy(instance: InstanceDoc, patch: PrivacyValues, context: CommandContext): Promise<PrivacyValues> {
    const changes = Object.entries(patch).filter(([, v]) => v !== undefined) as [PrivacySetting, string][];
    if (changes.length === 0) throw invalidInput('last_seen', `change at least one of ${PRIVACY_SETTINGS.join(', ')}`);
    for (const [setting, value] of changes) {
      if (!PRIVACY_SETTINGS.includes(setting)) throw invalidInput(setting, 'is not a privacy setting');
      if (!PRIVACY_VALUES[setting].includes(value)) throw invalidInput(setting, `must be one of ${PRIVACY_VALUES[setting].join(', ')}`);
    }
    for (const [setting, value] of changes) {
      await onNetwork(this.manager, instance._id, (c) => c.account.updatePrivacy(setting, value));
      await this.record(instance, [{ type: 'PrivacyUpdated', data: { settings: { [setting]: value } } }], context);
    }
    return this.privacy(instance);
  }

  labels(instance: InstanceDoc) {
    return this.contacts.labels(instance._id);
  }

  async labelChat(instance: InstanceDoc, phone: string, labelId: string, labeled: boolean, context: CommandContext): Promise<void> {
    const chat = toJid(phone);
    const labels = await this.contacts.labels(instance._id);
    if (!labels.some((l) => l.id === labelId)) {
      throw invalidInput('label_id', labels.length === 0 ? 'this account has no labels (labels are for business accounts)' : `no label ${labelId} on this account`);
    }
    await onNetwork(this.manager, instance._id, (c) => c.account.labelChat(chat, labelId, labeled));
    const position = await this.record(instance, [{ type: 'ChatLabeled', data: { chat, label_id: labelId, labeled } }], context);
    await this.rw.settle(position, ['chats']);
  }

  async postStatus(instance: InstanceDoc, request: StatusRequest, context: CommandContext): Promise<string> {
    const content = await this.statusContent(request);
    const recipients = request.recipients ?? (await this.contacts.statusAudience(instance._id));
    if (recipients.length === 0) throw invalidInput('recipients', 'the account has no contacts to post to: give recipients');
    const posted = await onNetwork(this.manager, instance._id, (c) => c.account.postStatus({ ...content, recipients }));
    const event: SessionEvent = {
      type: 'StatusPosted',
      data: {
        message_id: posted.message_id,
        recipients: posted.recipients,
        timestamp_s: posted.timestamp_s,
        ...(content.text === undefined ? {} : { text: content.text }),
        ...(content.media
          ? { media: { kind: content.media.kind, mimetype: content.media.mimetype, file_length: content.media.bytes.length, ...(content.media.caption ? { caption: content.media.caption } : {}) } }
          : {}),
        ...(content.background_color === undefined ? {} : { background_color: content.background_color }),
        ...(content.font === undefined ? {} : { font: content.font }),
      },
    };
    await this.record(instance, [event], context);
    return posted.message_id;
  }

  /** A text on a background, or an image or video (read from the bytes) with the text as caption. */
  private async statusContent(r: StatusRequest): Promise<StatusContent> {
    if (r.text === undefined && r.media === undefined) throw invalidInput('text', 'a status post needs text, media, or both');
    if (r.text !== undefined && (r.text.trim() === '' || r.text.length > STATUS_TEXT_MAX)) throw invalidInput('text', `must be 1 to ${STATUS_TEXT_MAX} characters`);
    if (r.background_color !== undefined && !/^#[0-9A-Fa-f]{6}$/.test(r.background_color)) throw invalidInput('background_color', 'must be #RRGGBB');
    if (!r.media) return { text: r.text!, ...(r.background_color ? { background_color: r.background_color } : {}), ...(r.font !== undefined ? { font: r.font } : {}) };
    if (r.background_color !== undefined || r.font !== undefined) throw invalidInput('background_color', 'background_color and font style text posts, not media');
    const bytes = Buffer.from(r.media.data, 'base64');
    if (bytes.length === 0) throw invalidInput('media.data', 'must be base64 of an image or a video');
    if (bytes.length > STATUS_MEDIA_MAX_BYTES) throw new DomainError('payload_too_large', `status media is at most ${STATUS_MEDIA_MAX_BYTES} bytes`);
    const kind = await mediaKind(bytes);
    if (!kind) throw invalidInput('media', 'is neither an image (JPEG, PNG, WebP) nor a video (MP4)');
    return { media: { ...kind, bytes, ...(r.text ? { caption: r.text } : {}) } };
  }

  private record(instance: InstanceDoc, events: SessionEvent[], context: CommandContext): Promise<bigint | null> {
    return this.manager.recordAction(instance._id, instance.account_id, events, context);
  }
}

/** What the bytes are, never what the caller said: an image sharp reads, or an MP4 (ISO BMFF `ftyp`). */
async function mediaKind(bytes: Buffer): Promise<{ kind: 'image' | 'video'; mimetype: string } | undefined> {
  if (bytes.length > 12 && bytes.toString('latin1', 4, 8) === 'ftyp') return { kind: 'video', mimetype: 'video/mp4' };
  try {
    const { format } = await sharp(bytes, { limitInputPixels: 40_000_000 }).metadata();
    if (format === 'jpeg' || format === 'png' || format === 'webp') return { kind: 'image', mimetype: `image/${format}` };
  } catch {
    return undefined;
  }
  return undefined;
}
