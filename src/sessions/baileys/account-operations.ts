import { createHash } from 'node:crypto';
import type { AnyMessageContent, WAPrivacyGroupAddValue, WAPrivacyOnlineValue, WAPrivacyValue, WAReadReceiptsValue } from '@whiskeysockets/baileys';
import { DomainError, invalidInput, notFound } from '../../domain/errors.js';
import type { PrivacySetting } from '../../domain/session/account-events.js';
import { toJid } from '../../domain/session/phone-numbers.js';
import type { AccountOperations, ContactProfile, PictureRef, GroupChange, GroupInfo, ParticipantAction, ParticipantResult, PrivacyValues, StatusContent } from '../account-port.js';
import { compact } from './compact.js';
import { groupInfoOf } from './group-translator.js';
import { isGroupJid, jidUser, normalizeJid } from './jid.js';
import type { NumberDirectory } from './number-directory.js';
import type { BaileysSocket } from './socket.js';

/** Baileys' privacy categories by the API's names (chats.js: privacyQuery). */
const CATEGORIES: Record<PrivacySetting, string> = {
  last_seen: 'last',
  online: 'online',
  profile_picture: 'profile',
  about: 'status',
  groups: 'groupadd',
  read_receipts: 'readreceipts',
};

const STATUS_BROADCAST = 'status@broadcast';

export interface AccountOperationsDeps {
  sock: BaileysSocket;
  numbers: NumberDirectory;
  /** Throws NotConnectedError unless the socket is open. */
  ensureOpen(): void;
  /** A socket call, its close-time failure said as NotConnectedError. */
  call<T>(work: () => Promise<T>): Promise<T>;
  /** An app-state change (push name, labels): waits for the phone's sync keys right after pairing. */
  appState(work: () => Promise<void>): Promise<void>;
  /** A change this connection makes, so the network's echo of it is not recorded a second time. */
  expectEcho(group: string, kind: string, people?: string[]): void;
}

/** The id a picture is known by here: its bytes' SHA-256, as uploaded (the network answers none). */
export const pictureId = (jpeg: Buffer) => createHash('sha256').update(jpeg).digest('hex').slice(0, 20);

/**
 * The network's answers to group requests are Boom errors carrying its status: 403 (not an admin),
 * 404 / 406 (no such group, or not in it), 400 (refused as malformed). Said as domain errors so a
 * client gets the same 4xx the sandbox gives; anything else stays the network's failure.
 */
function networkAnswer(error: unknown, what: string): never {
  // A query's error reply (socket.js: assertNodeErrorFree) carries the code as the Boom's `data`,
  // its statusCode left at Boom's 500; extractGroupMetadata puts the error node in `data`.
  const data = (error as { data?: unknown })?.data;
  const status = (error as { output?: { statusCode?: unknown } })?.output?.statusCode;
  const code = typeof data === 'number' ? data : Number((data as { attrs?: { code?: string } } | undefined)?.attrs?.code) || (typeof status === 'number' ? status : 0);
  if (code === 401 || code === 403) throw new DomainError('forbidden', `the network refused: only group admins may ${what}`);
  if (code === 404 || code === 406 || code === 410) throw notFound(`the network has no such group for this account (${what})`);
  if (code === 400) throw invalidInput('jid', `the network refused the request as malformed (${what})`);
  if (code === 409) throw new DomainError('conflict', `the network answered conflict (${what})`);
  throw error;
}

/** Groups, profile, block list, privacy, labels and status posts over Baileys' own calls. */
export class BaileysAccountOperations implements AccountOperations {
  constructor(private readonly d: AccountOperationsDeps) {}

  async groupCreate(name: string, participants: string[]): Promise<GroupInfo> {
    const jids = await this.resolveAll('participants', participants);
    const meta = await this.group('create the group', () => this.d.sock.groupCreate(name, jids));
    return this.info(meta);
  }

  async groupMetadata(group: string): Promise<GroupInfo> {
    return this.info(await this.group('read the group', () => this.d.sock.groupMetadata(group)));
  }

  async groupParticipants(group: string, action: ParticipantAction, people: string[]): Promise<ParticipantResult[]> {
    this.d.ensureOpen();
    const results: ParticipantResult[] = [];
    const asked = new Map<string, string>();
    for (const person of people) {
      const jid = await this.resolve(person);
      if (!jid) results.push({ phone: phoneOf(person), jid: toJid(person), status: 408 });
      else asked.set(jid, phoneOf(person));
    }
    if (asked.size === 0) return results;
    this.d.expectEcho(group, action, [...asked.keys()]);
    const answers = await this.group(`${action} participants`, () => this.d.sock.groupParticipantsUpdate(group, [...asked.keys()], action));
    const sent = [...asked.keys()];
    answers.forEach((answer, i) => {
      // The network answers each person under the jid it was asked for (a LID group may answer the LID).
      const jid = normalizeJid(answer.jid) ?? sent[i] ?? '';
      const phone = asked.get(jid) ?? asked.get(sent[i] ?? '') ?? jidUser(jid) ?? '';
      const status = Number.parseInt(String(answer.status), 10) || 500;
      results.push({ phone, jid, status });
    });
    return results;
  }

  async groupUpdate(group: string, change: GroupChange): Promise<void> {
    this.d.ensureOpen();
    const { sock } = this.d;
    this.d.expectEcho(group, 'update');
    if ('name' in change) await this.group('change the subject', () => sock.groupUpdateSubject(group, change.name));
    else if ('topic' in change) await this.group('change the description', () => sock.groupUpdateDescription(group, change.topic === '' ? undefined : change.topic));
    else if ('is_announce' in change) await this.group('change who may send', () => sock.groupSettingUpdate(group, change.is_announce ? 'announcement' : 'not_announcement'));
    else if ('is_locked' in change) await this.group('change who may edit the group', () => sock.groupSettingUpdate(group, change.is_locked ? 'locked' : 'unlocked'));
    else await this.group('change the disappearing timer', () => sock.groupToggleEphemeral(group, change.disappearing_timer));
  }

  async groupRevokeInvite(group: string): Promise<string> {
    const code = await this.group('reset the invite link', () => this.d.sock.groupRevokeInvite(group));
    if (!code) throw new Error('the network gave no new invite code');
    return code;
  }

  async groupInviteInfo(code: string): Promise<GroupInfo> {
    const meta = await this.group('read the invite', () => this.d.sock.groupGetInviteInfo(inviteCode(code)));
    return this.info(meta);
  }

  async groupAcceptInvite(code: string): Promise<string> {
    const jid = await this.group('join by invite', () => this.d.sock.groupAcceptInvite(inviteCode(code)));
    if (!jid) throw new Error('the network answered no group');
    const group = normalizeJid(jid) ?? jid;
    this.d.expectEcho(group, 'add');
    return group;
  }

  async groupLeave(group: string): Promise<void> {
    this.d.expectEcho(group, 'remove');
    await this.group('leave the group', () => this.d.sock.groupLeave(group));
  }

  async groupPicture(group: string, jpeg: Buffer): Promise<PictureRef> {
    this.d.expectEcho(group, 'update');
    await this.group("change the group's picture", () => this.d.sock.updateProfilePicture(group, jpeg));
    return this.pictureRef(group, jpeg);
  }

  async updateProfileName(name: string): Promise<void> {
    this.d.ensureOpen();
    await this.d.appState(() => this.d.sock.updateProfileName(name));
  }

  async updateProfileStatus(about: string): Promise<void> {
    this.d.ensureOpen();
    await this.d.call(() => this.d.sock.updateProfileStatus(about));
  }

  async updateProfilePicture(jpeg: Buffer): Promise<PictureRef> {
    this.d.ensureOpen();
    await this.d.call(() => this.d.sock.updateProfilePicture(this.me(), jpeg));
    return this.pictureRef(this.me(), jpeg);
  }

  /** The network answers no id: the picture is known by its bytes, and its URL is asked for (best effort). */
  private async pictureRef(jid: string, jpeg: Buffer): Promise<PictureRef> {
    const url = await this.d.call(() => this.d.sock.profilePictureUrl(jid, 'image')).catch(() => undefined);
    return { id: pictureId(jpeg), ...(url ? { url } : {}) };
  }

  async removeProfilePicture(): Promise<void> {
    this.d.ensureOpen();
    await this.d.call(() => this.d.sock.removeProfilePicture(this.me()));
  }

  async contactProfile(jid: string): Promise<ContactProfile> {
    this.d.ensureOpen();
    const address = await this.resolve(jid);
    if (!address) throw notFound(`${phoneOf(jid)} is not on WhatsApp`);
    const { sock } = this.d;
    const attempt = <T>(work: () => Promise<T>) => this.d.call(work).catch(() => undefined);
    const [status, picture, business] = await Promise.all([
      attempt(() => sock.fetchStatus(address)),
      attempt(() => sock.profilePictureUrl(address, 'image')),
      attempt(() => sock.getBusinessProfile(address)),
    ]);
    const about = (status?.[0]?.status as { status?: unknown } | undefined)?.status;
    const bp = business || undefined;
    return compact<ContactProfile>({
      jid: address,
      phone: jidUser(address) ?? '',
      about: typeof about === 'string' && about ? about : undefined,
      picture_url: picture || undefined,
      business: bp
        ? compact({ business_hours_timezone: bp.business_hours?.timezone || undefined, address: bp.address || undefined, email: bp.email || undefined, website: bp.website?.[0] || undefined })
        : undefined,
    });
  }

  async updateBlockStatus(jid: string, blocked: boolean): Promise<void> {
    this.d.ensureOpen();
    const address = jid.endsWith('@lid') ? jid : await this.resolve(jid);
    if (!address) throw invalidInput('phone', `${phoneOf(jid)} is not on WhatsApp`);
    await this.d.call(() => this.d.sock.updateBlockStatus(address, blocked ? 'block' : 'unblock'));
  }

  async fetchBlocklist(): Promise<string[]> {
    this.d.ensureOpen();
    const list = await this.d.call(() => this.d.sock.fetchBlocklist());
    return list.filter((j): j is string => typeof j === 'string').map((j) => normalizeJid(j) ?? j);
  }

  async fetchPrivacy(): Promise<PrivacyValues> {
    this.d.ensureOpen();
    const settings = await this.d.call(() => this.d.sock.fetchPrivacySettings(true));
    const out: PrivacyValues = {};
    for (const [name, category] of Object.entries(CATEGORIES) as [PrivacySetting, string][]) {
      const value = settings[category];
      if (typeof value === 'string') out[name] = value;
    }
    return out;
  }

  async updatePrivacy(setting: PrivacySetting, value: string): Promise<void> {
    this.d.ensureOpen();
    const { sock } = this.d;
    const calls: Record<PrivacySetting, () => Promise<void>> = {
      last_seen: () => sock.updateLastSeenPrivacy(value as WAPrivacyValue),
      online: () => sock.updateOnlinePrivacy(value as WAPrivacyOnlineValue),
      profile_picture: () => sock.updateProfilePicturePrivacy(value as WAPrivacyValue),
      about: () => sock.updateStatusPrivacy(value as WAPrivacyValue),
      groups: () => sock.updateGroupsAddPrivacy(value as WAPrivacyGroupAddValue),
      read_receipts: () => sock.updateReadReceiptsPrivacy(value as WAReadReceiptsValue),
    };
    await this.d.call(calls[setting]);
  }

  async labelChat(chat: string, labelId: string, labeled: boolean): Promise<void> {
    this.d.ensureOpen();
    const jid = toJid(chat);
    await this.d.appState(() => (labeled ? this.d.sock.addChatLabel(jid, labelId) : this.d.sock.removeChatLabel(jid, labelId)));
  }

  async postStatus(content: StatusContent): Promise<{ message_id: string; recipients: string[]; timestamp_s: number }> {
    this.d.ensureOpen();
    const recipients = await this.resolveAll('recipients', content.recipients ?? []);
    if (recipients.length === 0) throw invalidInput('recipients', 'nobody would see the post: give recipients, or have contacts');
    const message: AnyMessageContent = content.media
      ? content.media.kind === 'image'
        ? { image: content.media.bytes, mimetype: content.media.mimetype, ...(content.media.caption ? { caption: content.media.caption } : {}) }
        : { video: content.media.bytes, mimetype: content.media.mimetype, ...(content.media.caption ? { caption: content.media.caption } : {}) }
      : { text: content.text ?? '' };
    const sent = await this.d.call(() =>
      this.d.sock.sendMessage(STATUS_BROADCAST, message, {
        statusJidList: recipients,
        ...(content.background_color ? { backgroundColor: content.background_color } : {}),
        ...(content.font !== undefined ? { font: content.font } : {}),
      }),
    );
    const id = sent?.key.id;
    if (!id) throw new Error('the network accepted the status post but returned no record of it');
    const ts = Number(sent.messageTimestamp ?? 0) || Math.floor(Date.now() / 1000);
    return { message_id: id, recipients, timestamp_s: ts };
  }

  private me(): string {
    const id = this.d.sock.user?.id ?? this.d.sock.authState.creds.me?.id;
    if (!id) throw new Error('no account on this connection');
    return normalizeJid(id) ?? id;
  }

  private info(meta: Parameters<typeof groupInfoOf>[0]): GroupInfo {
    const info = groupInfoOf(meta);
    if (!info) throw new Error('the network answered a group without an id');
    return info;
  }

  /** A group call, its refusals said as the API's errors. */
  private async group<T>(what: string, work: () => Promise<T>): Promise<T> {
    this.d.ensureOpen();
    try {
      return await this.d.call(work);
    } catch (error) {
      networkAnswer(error, what);
    }
  }

  /** The jid the network knows a phone (or jid) by; undefined when it is not on the network. */
  private async resolve(person: string): Promise<string | undefined> {
    if (isGroupJid(person)) throw invalidInput('participants', `${person} is a group, not a person`);
    if (person.endsWith('@lid')) return person;
    const check = await this.d.call(() => this.d.numbers.check(phoneOf(person)));
    return check.exists ? check.jid : undefined;
  }

  private async resolveAll(field: string, people: string[]): Promise<string[]> {
    const out: string[] = [];
    for (const [i, person] of people.entries()) {
      const jid = await this.resolve(person);
      if (!jid) throw invalidInput(`${field}.${i}`, `${phoneOf(person)} is not on WhatsApp`);
      if (!out.includes(jid)) out.push(jid);
    }
    return out;
  }
}

const phoneOf = (person: string) => person.split('@')[0]!.split(':')[0]!;

/** An invite link or its bare code. */
function inviteCode(link: string): string {
  const match = /^(?:https?:\/\/)?chat\.whatsapp\.com\/(?:invite\/)?([A-Za-z0-9]+)\/?$/.exec(link.trim());
  if (match) return match[1]!;
  if (/^[A-Za-z0-9]{10,40}$/.test(link)) return link;
  throw invalidInput('invite_url', 'must be a chat.whatsapp.com invite link');
}
