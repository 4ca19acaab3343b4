import { conflict, DomainError, invalidInput, notFound } from '../../domain/errors.js';
import { DISAPPEARING_TIMERS } from '../../domain/session/account-events.js';
import type { SessionEvent, SessionEventData } from '../../domain/session/events.js';
import type { Clock } from '../../infra/clock.js';
import type { IdGenerator } from '../../infra/ids.js';
import type { GroupChange, GroupInfo, ParticipantAction, ParticipantResult } from '../account-port.js';
import { parseAddress, requireGroupJid, unixSeconds, userJid } from './addresses.js';
import { member, type Groups } from './groups.js';
import type { Numbers } from './numbers.js';
import type { Phones } from './phones.js';
import type { Pictures } from './pictures.js';
import type { Registry } from './registry.js';
import { DURABLE, type GroupDoc, type GroupMember, type PhoneDoc, type SandboxState } from './state.js';
import { groupInfo, participant } from './views.js';

/** Who acted: a phone itself (its own linked device hears of it too) or its linked instance (which records its own action). */
export type Origin = 'phone' | 'instance';

const SUBJECT_MAX = 100;
const DESCRIPTION_MAX = 2048;
/** The network's invite codes: 22 characters of this alphabet. */
const CODE_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

const forbidden = (message: string) => new DomainError('forbidden', message);

/**
 * What members do to a group on the sandbox, with the network's rules: settings (announce,
 * locked) and membership are for admins; subject, description, timer and picture for any member
 * unless the group is locked; the owner cannot be removed or demoted by anyone but itself. Each
 * change reaches the instances of everyone concerned; the acting instance learns of its own
 * change from its answer, as the real network's requester does.
 */
export class GroupAdmin {
  constructor(
    private readonly state: SandboxState,
    private readonly phones: Phones,
    private readonly groups: Groups,
    private readonly numbers: Numbers,
    private readonly pictures: Pictures,
    private readonly registry: Registry,
    private readonly ids: IdGenerator,
    private readonly clock: Clock,
  ) {}

  async create(me: PhoneDoc, name: string, people: string[]): Promise<GroupInfo> {
    const subject = name.trim();
    if (subject === '' || subject.length > SUBJECT_MAX) throw invalidInput('name', `must be 1 to ${SUBJECT_MAX} characters`);
    const phones: string[] = [];
    for (const [i, person] of people.entries()) {
      const address = parseAddress(`participants.${i}`, person);
      if (address.kind !== 'phone') throw invalidInput(`participants.${i}`, 'must be a person, not a group');
      const check = await this.numbers.check(me, address.phone);
      if (!check.exists) throw invalidInput(`participants.${i}`, `${address.phone} is not on WhatsApp`);
      const phone = check.jid.slice(0, check.jid.indexOf('@'));
      if (phone !== me._id && !phones.includes(phone)) phones.push(phone);
    }
    const members = await this.phones.byIds(phones);
    const group = await this.groups.insertNew({
      _id: '',
      account_id: me.account_id,
      name: subject,
      owner: me._id,
      participants: [member(me, true), ...phones.map((p) => member(members.get(p)!))],
      announce: false,
      locked: false,
      ephemeral_seconds: 0,
      created_s: unixSeconds(this.clock.now()),
    });
    // The others are added to a new group: it shows up in their lists.
    await this.tell(group.participants.map((p) => p.phone), [{ type: 'GroupsUpserted', data: { groups: [groupInfo(group)] } }], me, 'instance');
    return groupInfo(group);
  }

  async metadata(me: PhoneDoc, jid: string): Promise<GroupInfo> {
    return groupInfo(await this.membership(me, jid));
  }

  async participants(me: PhoneDoc, jid: string, action: ParticipantAction, people: string[], origin: Origin): Promise<ParticipantResult[]> {
    const group = await this.membership(me, jid);
    const self = group.participants.find((p) => p.phone === me._id)!;
    if (!self.is_admin) throw forbidden('only group admins change participants');
    const results: ParticipantResult[] = [];
    const members = [...group.participants];
    const changed: GroupMember[] = [];
    for (const [i, person] of people.entries()) {
      const address = parseAddress(`participants.${i}`, person);
      if (address.kind !== 'phone') throw invalidInput(`participants.${i}`, 'must be a person, not a group');
      const check = await this.numbers.check(me, address.phone);
      if (!check.exists) {
        results.push({ phone: address.phone, jid: address.jid, status: 408 });
        continue;
      }
      const phone = check.jid.slice(0, check.jid.indexOf('@'));
      const at = members.findIndex((p) => p.phone === phone);
      const current = at >= 0 ? members[at] : undefined;
      const answer = (status: number, who?: GroupMember) => results.push({ phone: address.phone, jid: userJid(phone), status, ...(who ? { participant: participant(who) } : {}) });
      if (action === 'add') {
        if (current) answer(409);
        else {
          const doc = (await this.phones.byIds([phone])).get(phone)!;
          const added = member(doc);
          members.push(added);
          changed.push(added);
          answer(200, added);
        }
        continue;
      }
      if (!current) {
        answer(408);
        continue;
      }
      // The owner answers to no one but itself.
      if (phone === group.owner && phone !== me._id) {
        answer(403);
        continue;
      }
      if (action === 'remove') {
        members.splice(at, 1);
        changed.push(current);
        answer(200, current);
      } else if (action === 'promote') {
        if (current.is_admin) answer(409);
        else {
          members[at] = { ...current, is_admin: true };
          changed.push(members[at]!);
          answer(200, members[at]);
        }
      } else if (!current.is_admin) answer(409);
      else {
        members[at] = { ...current, is_admin: false, is_super_admin: false };
        changed.push(members[at]!);
        answer(200, members[at]);
      }
    }
    if (changed.length === 0) return results;
    const after = await this.save(group, { participants: members });
    const data = { group: group._id, participants: changed.map(participant), by: userJid(me._id) };
    const event: SessionEvent =
      action === 'add'
        ? { type: 'GroupParticipantsAdded', data }
        : action === 'remove'
          ? { type: 'GroupParticipantsRemoved', data }
          : action === 'promote'
            ? { type: 'GroupParticipantsPromoted', data }
            : { type: 'GroupParticipantsDemoted', data };
    await this.announce(group, after, [event], me, origin);
    return results;
  }

  /** A settings change; the network checks who may make it. */
  async update(me: PhoneDoc, jid: string, change: GroupChange, origin: Origin): Promise<void> {
    const group = await this.membership(me, jid);
    const self = group.participants.find((p) => p.phone === me._id)!;
    const adminOnly = 'is_announce' in change || 'is_locked' in change || group.locked;
    if (adminOnly && !self.is_admin) throw forbidden(group.locked ? 'the group is locked: only admins change its settings' : 'only group admins change this setting');
    const set: Partial<GroupDoc> = {};
    const changes: SessionEventData<'GroupUpdated'>['changes'] = {};
    if ('name' in change) {
      const subject = change.name.trim();
      if (subject === '' || subject.length > SUBJECT_MAX) throw invalidInput('name', `must be 1 to ${SUBJECT_MAX} characters`);
      set.name = changes.name = subject;
    } else if ('topic' in change) {
      if (change.topic.length > DESCRIPTION_MAX) throw invalidInput('topic', `must be at most ${DESCRIPTION_MAX} characters`);
      set.topic = changes.topic = change.topic;
      if (change.topic === '') changes.topic_deleted = true;
    } else if ('is_announce' in change) set.announce = changes.is_announce = change.is_announce;
    else if ('is_locked' in change) set.locked = changes.is_locked = change.is_locked;
    else {
      if (!(DISAPPEARING_TIMERS as readonly number[]).includes(change.disappearing_timer)) {
        throw invalidInput('disappearing_timer', `must be one of ${DISAPPEARING_TIMERS.join(', ')}`);
      }
      set.ephemeral_seconds = changes.disappearing_timer = change.disappearing_timer;
    }
    const after = await this.save(group, set);
    await this.announce(group, after, [{ type: 'GroupUpdated', data: { group: group._id, changes, by: userJid(me._id) } }], me, origin);
  }

  async picture(me: PhoneDoc, jid: string, jpeg: Buffer): Promise<string> {
    const group = await this.membership(me, jid);
    const self = group.participants.find((p) => p.phone === me._id)!;
    if (group.locked && !self.is_admin) throw forbidden('the group is locked: only admins change its picture');
    const id = await this.pictures.store(me.account_id, jpeg);
    const after = await this.save(group, { picture_id: id });
    await this.announce(group, after, [{ type: 'GroupUpdated', data: { group: group._id, changes: { picture_id: id }, by: userJid(me._id) } }], me, 'instance');
    return id;
  }

  /** The invite code, made on first ask (admins only). */
  async inviteCode(me: PhoneDoc, jid: string): Promise<string> {
    const group = await this.adminOf(me, jid);
    if (group.invite_code) return group.invite_code;
    const code = this.newCode();
    await this.save(group, { invite_code: code });
    return code;
  }

  async revokeInvite(me: PhoneDoc, jid: string): Promise<string> {
    const group = await this.adminOf(me, jid);
    const code = this.newCode();
    await this.save(group, { invite_code: code });
    return code;
  }

  /** The group an invite leads to; a code of another account's sandbox is no code at all. */
  async inviteInfo(viewer: PhoneDoc, code: string): Promise<GroupInfo> {
    return groupInfo(await this.byCode(viewer, code));
  }

  async join(me: PhoneDoc, code: string, origin: Origin): Promise<string> {
    const group = await this.byCode(me, code);
    if (group.participants.some((p) => p.phone === me._id)) throw conflict('already a member of this group');
    const joined = member(me);
    const after = await this.save(group, { participants: [...group.participants, joined] });
    const added: SessionEvent = { type: 'GroupParticipantsAdded', data: { group: group._id, participants: [participant(joined)], by: userJid(me._id) } };
    await this.announce(group, after, [added], me, origin);
    return group._id;
  }

  async leave(me: PhoneDoc, jid: string): Promise<void> {
    const group = await this.membership(me, jid);
    const self = group.participants.find((p) => p.phone === me._id)!;
    const after = await this.save(group, { participants: group.participants.filter((p) => p.phone !== me._id) });
    const removed: SessionEvent = { type: 'GroupParticipantsRemoved', data: { group: group._id, participants: [participant(self)], by: userJid(me._id) } };
    await this.announce(group, after, [removed], me, 'instance');
  }

  /** The group as the network holds it (the far end of SANDBOX.md). */
  async view(accountId: string, jid: string): Promise<GroupDoc> {
    return this.groups.owned(accountId, jid);
  }

  private async membership(me: PhoneDoc, jid: string): Promise<GroupDoc> {
    const id = requireGroupJid('jid', jid);
    const group = await this.state.groups.findOne({ _id: id });
    // A group the account is not in looks, from its side, like no group at all.
    if (!group || group.account_id !== me.account_id || !group.participants.some((p) => p.phone === me._id)) {
      throw notFound(`group ${id} not found among this account's groups`);
    }
    return group;
  }

  private async adminOf(me: PhoneDoc, jid: string): Promise<GroupDoc> {
    const group = await this.membership(me, jid);
    if (!group.participants.find((p) => p.phone === me._id)!.is_admin) throw forbidden('only group admins manage the invite link');
    return group;
  }

  private async byCode(viewer: PhoneDoc, code: string): Promise<GroupDoc> {
    if (!/^[A-Za-z0-9]{10,40}$/.test(code)) throw invalidInput('invite_url', 'is not an invite link');
    const group = await this.state.groups.findOne({ invite_code: code });
    if (!group || group.account_id !== viewer.account_id) throw notFound('the invite link is not valid (revoked, or never existed)');
    return group;
  }

  private async save(group: GroupDoc, set: Partial<GroupDoc>): Promise<GroupDoc> {
    await this.state.groups.updateOne({ _id: group._id }, { $set: set }, DURABLE);
    return { ...group, ...set };
  }

  private newCode(): string {
    return Array.from(this.ids.bytes(22), (b) => CODE_ALPHABET[b % CODE_ALPHABET.length]).join('');
  }

  /**
   * Everyone concerned hears of a change: members before and after. Those still members also get
   * the group's new state; those no longer in it hear they left. The acting instance records its
   * own change from its answer; a phone's own device hears of what the phone did.
   */
  private async announce(before: GroupDoc, after: GroupDoc, events: SessionEvent[], actor: PhoneDoc, origin: Origin): Promise<void> {
    const concerned = [...new Set([...before.participants, ...after.participants].map((p) => p.phone))];
    const upserted: SessionEvent = { type: 'GroupsUpserted', data: { groups: [groupInfo(after)] } };
    for (const phone of concerned) {
      if (origin === 'instance' && phone === actor._id) continue;
      const stillMember = after.participants.some((p) => p.phone === phone);
      const left: SessionEvent = { type: 'GroupLeft', data: { group: after._id, by: userJid(actor._id) } };
      await this.registry.toPhone(phone, stillMember ? [...events, upserted] : [...events, left]);
    }
  }

  private async tell(phones: string[], events: SessionEvent[], actor: PhoneDoc, origin: Origin): Promise<void> {
    for (const phone of phones) {
      if (origin === 'instance' && phone === actor._id) continue;
      await this.registry.toPhone(phone, events);
    }
  }
}
