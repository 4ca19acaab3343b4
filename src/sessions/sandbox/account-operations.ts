import { invalidInput } from '../../domain/errors.js';
import type { PrivacySetting } from '../../domain/session/account-events.js';
import type { AccountOperations, ContactProfile, PictureRef, GroupChange, GroupInfo, ParticipantAction, ParticipantResult, PrivacyValues, StatusContent } from '../account-port.js';
import { NotConnectedError } from '../port.js';
import type { AccountAdmin } from './account-admin.js';
import type { SandboxConnection } from './connection.js';
import type { GroupAdmin } from './group-admin.js';
import type { Phones } from './phones.js';
import type { Pictures } from './pictures.js';
import type { PhoneDoc } from './state.js';

/** An invite link or its bare code. */
export function inviteCodeOf(link: string): string {
  const match = /^(?:https?:\/\/)?chat\.whatsapp\.com\/(?:invite\/)?([A-Za-z0-9]+)\/?$/.exec(link.trim());
  if (match) return match[1]!;
  if (/^[A-Za-z0-9]{10,40}$/.test(link)) return link;
  throw invalidInput('invite_url', 'must be a chat.whatsapp.com invite link');
}

/** One linked instance's account operations on the sandbox: its phone, acting on the network. */
export class SandboxAccountOperations implements AccountOperations {
  constructor(
    private readonly conn: SandboxConnection,
    private readonly phones: Phones,
    private readonly groups: GroupAdmin,
    private readonly admin: AccountAdmin,
    private readonly pictures: Pictures,
  ) {}

  async groupCreate(name: string, participants: string[]): Promise<GroupInfo> {
    return this.groups.create(await this.me(), name, participants);
  }

  async groupMetadata(group: string): Promise<GroupInfo> {
    return this.groups.metadata(await this.me(), group);
  }

  async groupParticipants(group: string, action: ParticipantAction, people: string[]): Promise<ParticipantResult[]> {
    return this.groups.participants(await this.me(), group, action, people, 'instance');
  }

  async groupUpdate(group: string, change: GroupChange): Promise<void> {
    await this.groups.update(await this.me(), group, change, 'instance');
  }

  /** The port's own invite-code call (NetworkConnection.groupInviteCode) lands here. */
  async inviteCode(group: string): Promise<string> {
    return this.groups.inviteCode(await this.me(), group);
  }

  async groupRevokeInvite(group: string): Promise<string> {
    return this.groups.revokeInvite(await this.me(), group);
  }

  async groupInviteInfo(code: string): Promise<GroupInfo> {
    return this.groups.inviteInfo(await this.me(), inviteCodeOf(code));
  }

  async groupAcceptInvite(code: string): Promise<string> {
    return this.groups.join(await this.me(), inviteCodeOf(code), 'instance');
  }

  async groupLeave(group: string): Promise<void> {
    await this.groups.leave(await this.me(), group);
  }

  async groupPicture(group: string, jpeg: Buffer): Promise<PictureRef> {
    const id = await this.groups.picture(await this.me(), group, jpeg);
    return { id, url: this.pictures.url(id) };
  }

  async updateProfileName(name: string): Promise<void> {
    await this.admin.setName(await this.me(), name);
  }

  async updateProfileStatus(about: string): Promise<void> {
    await this.admin.setAbout(await this.me(), about);
  }

  async updateProfilePicture(jpeg: Buffer): Promise<PictureRef> {
    const id = await this.admin.setPicture(await this.me(), jpeg);
    return { id, url: this.pictures.url(id) };
  }

  async removeProfilePicture(): Promise<void> {
    await this.admin.removePicture(await this.me());
  }

  async contactProfile(jid: string): Promise<ContactProfile> {
    return this.admin.contactProfile(await this.me(), jid);
  }

  async updateBlockStatus(jid: string, blocked: boolean): Promise<void> {
    await this.admin.block(await this.me(), jid, blocked);
  }

  async fetchBlocklist(): Promise<string[]> {
    return this.admin.blocklist(await this.me());
  }

  async fetchPrivacy(): Promise<PrivacyValues> {
    return this.admin.privacy(await this.me());
  }

  async updatePrivacy(setting: PrivacySetting, value: string): Promise<void> {
    await this.admin.setPrivacy(await this.me(), setting, value);
  }

  async labelChat(chat: string, labelId: string, labeled: boolean): Promise<void> {
    await this.admin.labelChat(await this.me(), chat, labelId, labeled);
  }

  async postStatus(content: StatusContent): Promise<{ message_id: string; recipients: string[]; timestamp_s: number }> {
    return this.admin.postStatus(await this.me(), content);
  }

  /** The linked phone, read fresh: another request may have just changed it. */
  private async me(): Promise<PhoneDoc> {
    const phone = this.conn.connectedPhone();
    const doc = (await this.phones.byIds([phone])).get(phone);
    if (!doc) throw new NotConnectedError('the linked sandbox phone no longer exists');
    return doc;
  }
}
