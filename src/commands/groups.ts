import type { CommandContext } from '../domain/audit.js';
import { DISAPPEARING_TIMERS } from '../domain/session/account-events.js';
import { DomainError, invalidInput, notFound } from '../domain/errors.js';
import type { SessionEvent, SessionEventData } from '../domain/session/events.js';
import type { GroupQueries } from '../projections/groups/group-queries.js';
import { groupDoc, type GroupDoc } from '../projections/groups/groups-projection.js';
import type { InstanceDoc } from '../projections/instances/instances-projection.js';
import type { GroupChange, GroupInfo, GroupParticipant, ParticipantAction, ParticipantResult } from '../sessions/account-port.js';
import { onNetwork } from '../sessions/network-call.js';
import type { SessionManager } from '../sessions/session-manager.js';
import type { GroupInvites } from './group-invites.js';
import { pictureJpeg } from './pictures.js';
import type { ReadYourWrites } from './read-your-writes.js';

const GROUP = /^[0-9]{6,40}(-[0-9]{6,20})?@g\.us$/;
const READ_MODELS = ['groups'];

/** A group jid, or 400: a person's jid or anything else is not a group. */
export function requireGroup(jid: string, field = 'jid'): string {
  if (!GROUP.test(jid)) throw invalidInput(field, `${jid} is not a group jid (<digits>@g.us)`);
  return jid;
}

/** An invite link (https://chat.whatsapp.com/<code>) or its bare code. */
export function inviteCodeOf(link: string): string {
  const match = /^(?:https?:\/\/)?chat\.whatsapp\.com\/(?:invite\/)?([A-Za-z0-9]{10,40})\/?$/.exec(link.trim());
  if (match) return match[1]!;
  if (/^[A-Za-z0-9]{10,40}$/.test(link)) return link;
  throw invalidInput('invite_url', 'must be a https://chat.whatsapp.com/<code> invite link');
}

export interface GroupPatch {
  name?: string;
  topic?: string;
  is_announce?: boolean;
  is_locked?: boolean;
  disappearing_timer?: number;
}

/**
 * Groups as an integrator runs them (CONTRACT.md, "Groups, ..."): each change goes to the network
 * through the live session, then is recorded with the caller as its actor, and the answer waits
 * for the group read model so the caller reads its own change.
 */
export class GroupCommands {
  constructor(
    private readonly manager: SessionManager,
    private readonly groups: GroupQueries,
    private readonly invites: GroupInvites,
    private readonly rw: ReadYourWrites,
  ) {}

  async create(instance: InstanceDoc, name: string, participants: string[], context: CommandContext): Promise<GroupDoc> {
    if (name.trim() === '' || name.trim().length > 100) throw invalidInput('name', 'must be 1 to 100 characters');
    const info = await onNetwork(this.manager, instance._id, (c) => c.account.groupCreate(name.trim(), participants));
    await this.record(instance, [{ type: 'GroupCreated', data: { group: createdOf(info) } }, { type: 'GroupsUpserted', data: { groups: [info] } }], context);
    return groupDoc(instance._id, info);
  }

  async get(instance: InstanceDoc, jid: string): Promise<GroupDoc> {
    const doc = await this.groups.byJid(instance._id, requireGroup(jid));
    if (!doc) throw notFound(`group ${jid} is not among this account's groups`);
    return doc;
  }

  /** Every field is checked before the first change, so bad input changes nothing. */
  async update(instance: InstanceDoc, jid: string, patch: GroupPatch, context: CommandContext): Promise<GroupDoc> {
    requireGroup(jid);
    const changes: GroupChange[] = [];
    if (patch.name !== undefined) {
      if (patch.name.trim() === '' || patch.name.trim().length > 100) throw invalidInput('name', 'must be 1 to 100 characters');
      changes.push({ name: patch.name.trim() });
    }
    if (patch.topic !== undefined) changes.push({ topic: patch.topic });
    if (patch.is_announce !== undefined) changes.push({ is_announce: patch.is_announce });
    if (patch.is_locked !== undefined) changes.push({ is_locked: patch.is_locked });
    if (patch.disappearing_timer !== undefined) {
      if (!(DISAPPEARING_TIMERS as readonly number[]).includes(patch.disappearing_timer)) {
        throw invalidInput('disappearing_timer', `must be one of ${DISAPPEARING_TIMERS.join(', ')} (seconds; 0 is off)`);
      }
      changes.push({ disappearing_timer: patch.disappearing_timer });
    }
    if (changes.length === 0) throw invalidInput('name', 'change at least one of name, topic, is_announce, is_locked, disappearing_timer');
    // The network decides who may change what; asked first for the group as it is, so a change
    // the account may not make (not admin, locked group) is refused before anything changed.
    const current = await onNetwork(this.manager, instance._id, (c) => c.account.groupMetadata(jid));
    const self = await this.self(instance);
    const me = current.participants.find((p) => isSelf(p, self));
    if (!me) throw notFound(`group ${jid} is not among this account's groups`);
    const adminOnly = changes.some((c) => 'is_announce' in c || 'is_locked' in c) || current.is_locked;
    if (adminOnly && !me.is_admin && !me.is_super_admin) {
      throw new DomainError('forbidden', current.is_locked ? 'the group is locked: only admins change it' : 'only group admins change who may send or edit');
    }
    let position: bigint | null = null;
    for (const change of changes) {
      await onNetwork(this.manager, instance._id, (c) => c.account.groupUpdate(jid, change));
      position = await this.manager.recordAction(instance._id, instance.account_id, [{ type: 'GroupUpdated', data: { group: jid, changes: changesOf(change), ...by(self) } }], context);
    }
    await this.rw.settle(position, READ_MODELS);
    return (await this.groups.byJid(instance._id, jid)) ?? groupDoc(instance._id, current);
  }

  /** Per person, as the network answered; only the done ones are recorded. */
  async participants(instance: InstanceDoc, jid: string, action: ParticipantAction, people: string[], context: CommandContext): Promise<ParticipantResult[]> {
    requireGroup(jid);
    const results = await onNetwork(this.manager, instance._id, (c) => c.account.groupParticipants(jid, action, people));
    const done = results.filter((r) => r.status === 200);
    if (done.length > 0) {
      const self = await this.self(instance);
      const participants = done.map((r) => r.participant ?? participantOf(r, action));
      const data = { group: jid, participants, ...by(self) };
      const event: SessionEvent =
        action === 'add'
          ? { type: 'GroupParticipantsAdded', data }
          : action === 'remove'
            ? { type: 'GroupParticipantsRemoved', data }
            : action === 'promote'
              ? { type: 'GroupParticipantsPromoted', data }
              : { type: 'GroupParticipantsDemoted', data };
      const events: SessionEvent[] = [event];
      // The group as it is now, roles and all (best effort: the change itself is recorded either way).
      const fresh = await onNetwork(this.manager, instance._id, (c) => c.account.groupMetadata(jid)).catch(() => undefined);
      if (fresh) events.push({ type: 'GroupsUpserted', data: { groups: [fresh] } });
      await this.record(instance, events, context);
    }
    return results;
  }

  async inviteUrl(instance: InstanceDoc, jid: string): Promise<string> {
    requireGroup(jid);
    const code = await onNetwork(this.manager, instance._id, (c) => c.groupInviteCode(jid));
    this.invites.remember(instance._id, jid, code);
    return `https://chat.whatsapp.com/${code}`;
  }

  async revokeInvite(instance: InstanceDoc, jid: string, context: CommandContext): Promise<string> {
    requireGroup(jid);
    this.invites.forget(instance._id, jid);
    const code = await onNetwork(this.manager, instance._id, (c) => c.account.groupRevokeInvite(jid));
    this.invites.remember(instance._id, jid, code);
    await this.record(instance, [{ type: 'GroupInviteRevoked', data: { group: jid, ...by(await this.self(instance)) } }], context);
    return `https://chat.whatsapp.com/${code}`;
  }

  async inviteInfo(instance: InstanceDoc, inviteUrl: string): Promise<GroupDoc> {
    const code = inviteCodeOf(inviteUrl);
    const info = await onNetwork(this.manager, instance._id, (c) => c.account.groupInviteInfo(code));
    return groupDoc(instance._id, info);
  }

  async join(instance: InstanceDoc, inviteUrl: string, context: CommandContext): Promise<string> {
    const code = inviteCodeOf(inviteUrl);
    const jid = await onNetwork(this.manager, instance._id, (c) => c.account.groupAcceptInvite(code));
    const self = await this.self(instance);
    const events: SessionEvent[] = [];
    const info = await onNetwork(this.manager, instance._id, (c) => c.account.groupMetadata(jid)).catch(() => undefined);
    const mine = info?.participants.find((p) => isSelf(p, self));
    events.push({ type: 'GroupParticipantsAdded', data: { group: jid, participants: [mine ?? selfParticipant(self)], ...by(self) } });
    if (info) events.push({ type: 'GroupsUpserted', data: { groups: [info] } });
    await this.record(instance, events, context);
    return jid;
  }

  async leave(instance: InstanceDoc, jid: string, context: CommandContext): Promise<void> {
    requireGroup(jid);
    await onNetwork(this.manager, instance._id, (c) => c.account.groupLeave(jid));
    const self = await this.self(instance);
    const known = await this.groups.byJid(instance._id, jid);
    const mine = known?.participants.find((p) => isSelf(p, self)) ?? selfParticipant(self);
    this.invites.forget(instance._id, jid);
    await this.record(
      instance,
      [
        { type: 'GroupParticipantsRemoved', data: { group: jid, participants: [mine], ...by(self) } },
        { type: 'GroupLeft', data: { group: jid, ...by(self) } },
      ],
      context,
    );
  }

  async picture(instance: InstanceDoc, jid: string, media: { data: string }, context: CommandContext): Promise<string> {
    requireGroup(jid);
    const jpeg = await pictureJpeg(media);
    const picture = await onNetwork(this.manager, instance._id, (c) => c.account.groupPicture(jid, jpeg));
    await this.record(instance, [{ type: 'GroupUpdated', data: { group: jid, changes: { picture_id: picture.id }, ...by(await this.self(instance)) } }], context);
    return picture.id;
  }

  private async record(instance: InstanceDoc, events: SessionEvent[], context: CommandContext): Promise<void> {
    const position = await this.manager.recordAction(instance._id, instance.account_id, events, context);
    await this.rw.settle(position, READ_MODELS);
  }

  private async self(instance: InstanceDoc): Promise<{ jid?: string; lid?: string }> {
    const status = this.manager.liveStatus(instance._id);
    const jid = status?.jid ?? (await this.manager.selfJid(instance._id)) ?? undefined;
    return { ...(jid ? { jid } : {}), ...(status?.lid ? { lid: status.lid } : {}) };
  }
}

const bare = (jid: string | undefined) => (jid ? jid.replace(/:\d+@/, '@') : undefined);

function isSelf(p: GroupParticipant, self: { jid?: string; lid?: string }): boolean {
  const mine = [bare(self.jid), bare(self.lid)].filter((j): j is string => !!j);
  return [p.jid, p.phone_number, p.lid].some((j) => j !== undefined && j !== '' && mine.includes(bare(j)!));
}

function selfParticipant(self: { jid?: string; lid?: string }): GroupParticipant {
  const jid = bare(self.jid) ?? bare(self.lid) ?? '';
  return { jid, ...(jid.endsWith('@s.whatsapp.net') ? { phone_number: jid } : {}), ...(self.lid ? { lid: bare(self.lid)! } : {}), is_admin: false, is_super_admin: false };
}

const by = (self: { jid?: string }) => (self.jid ? { by: bare(self.jid)! } : {});

function changesOf(change: GroupChange): SessionEventData<'GroupUpdated'>['changes'] {
  if ('topic' in change) return change.topic === '' ? { topic: '', topic_deleted: true } : { topic: change.topic };
  return { ...change };
}

/** A done person the driver did not describe: their jid, with the role the action gave them. */
function participantOf(r: ParticipantResult, action: ParticipantAction): GroupParticipant {
  return {
    jid: r.jid,
    ...(r.jid.endsWith('@s.whatsapp.net') ? { phone_number: r.jid } : {}),
    ...(r.jid.endsWith('@lid') ? { lid: r.jid } : {}),
    is_admin: action === 'promote',
    is_super_admin: false,
  };
}

function createdOf(info: GroupInfo): SessionEventData<'GroupCreated'>['group'] {
  const { jid, owner_jid, owner_pn, name, topic, is_locked, is_announce, is_ephemeral, disappearing_timer, created_s, participants } = info;
  return {
    jid,
    name,
    is_locked,
    is_announce,
    is_ephemeral,
    disappearing_timer,
    participants,
    ...(owner_jid === undefined ? {} : { owner_jid }),
    ...(owner_pn === undefined ? {} : { owner_pn }),
    ...(topic === undefined ? {} : { topic }),
    ...(created_s === undefined ? {} : { created_s }),
  };
}
