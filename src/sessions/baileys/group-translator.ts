import type { BaileysEventMap, GroupMetadata, GroupParticipant } from '@whiskeysockets/baileys';
import type { SessionEvent, SessionEventData } from '../../domain/session/events.js';
import { compact } from './compact.js';
import { isLid, isPhoneJid, normalizeJid } from './jid.js';

type GroupInfo = SessionEventData<'GroupsUpserted'>['groups'][number];
type Participant = GroupInfo['participants'][number];

export function participantOf(p: GroupParticipant): Participant | undefined {
  const jid = normalizeJid(p.id);
  if (!jid) return undefined;
  const superAdmin = p.admin === 'superadmin' || p.isSuperAdmin === true;
  return compact<Participant>({
    jid,
    // v7 gives the other identity beside the jid: the phone number of a LID, the LID of a number.
    phone_number: normalizeJid(p.phoneNumber) ?? (isPhoneJid(jid) ? jid : undefined),
    lid: normalizeJid(p.lid) ?? (isLid(jid) ? jid : undefined),
    is_admin: superAdmin || p.admin === 'admin' || p.isAdmin === true,
    is_super_admin: superAdmin,
    display_name: p.notify || p.name || undefined,
  });
}

export function groupInfoOf(meta: GroupMetadata): GroupInfo | undefined {
  const jid = normalizeJid(meta.id);
  if (!jid) return undefined;
  const owner = normalizeJid(meta.owner);
  const timer = meta.ephemeralDuration ?? 0;
  return compact<GroupInfo>({
    jid,
    owner_jid: owner,
    owner_pn: normalizeJid(meta.ownerPn) ?? (isPhoneJid(owner) ? owner : undefined),
    name: meta.subject ?? '',
    topic: meta.desc || undefined,
    is_locked: meta.restrict === true,
    is_announce: meta.announce === true,
    is_ephemeral: timer > 0,
    disappearing_timer: timer,
    created_s: meta.creation || undefined,
    is_community: meta.isCommunity ?? undefined,
    // A group inside a community names its parent; the community itself has no parent.
    community_jid: normalizeJid(meta.linkedParent),
    invite_code: meta.inviteCode || undefined,
    participants: (meta.participants ?? []).map(participantOf).filter((p): p is Participant => !!p),
  });
}

export function groupsUpsertEvents(groups: GroupMetadata[]): SessionEvent[] {
  const infos = groups.map(groupInfoOf).filter((g): g is GroupInfo => !!g);
  return infos.length ? [{ type: 'GroupsUpserted', data: { groups: infos } }] : [];
}

/**
 * `groups.update` is either complete metadata (what groupFetchAllParticipating and the
 * "groups dirty" refresh emit) or a partial change (subject, description, settings). Complete
 * ones become GroupsUpserted; the jids of partial ones are returned so the driver can fetch the
 * group and upsert it whole, as GroupInfo has no partial form.
 */
export function groupsUpdateEvents(updates: BaileysEventMap['groups.update']): { events: SessionEvent[]; incomplete: string[] } {
  const complete: GroupMetadata[] = [];
  const incomplete: string[] = [];
  for (const update of updates) {
    if (isComplete(update)) complete.push(update);
    else {
      const jid = normalizeJid(update.id);
      if (jid && !incomplete.includes(jid)) incomplete.push(jid);
    }
  }
  return { events: groupsUpsertEvents(complete), incomplete };
}

function isComplete(update: Partial<GroupMetadata>): update is GroupMetadata {
  return typeof update.id === 'string' && typeof update.subject === 'string' && Array.isArray(update.participants);
}

/**
 * Joins and leaves. The actor is given by its phone number when the network revealed it, else
 * by the jid it used. Promotions and demotions change roles, which only whole metadata carries:
 * they are returned in `refresh` for the driver to fetch the group (as for partial updates).
 */
export function groupParticipantsEvents(update: BaileysEventMap['group-participants.update']): { events: SessionEvent[]; refresh: string[] } {
  const group = normalizeJid(update.id);
  if (!group) return { events: [], refresh: [] };
  if (update.action === 'promote' || update.action === 'demote' || update.action === 'modify') {
    return { events: [], refresh: [group] };
  }
  // Typed as objects in v7; older payload shapes carried bare jids, which we still accept.
  const participants = (update.participants as (GroupParticipant | string)[])
    .map((p) => participantOf(typeof p === 'string' ? { id: p } : p))
    .filter((p): p is Participant => !!p);
  if (!participants.length) return { events: [], refresh: [] };
  const by = normalizeJid(update.authorPn) ?? normalizeJid(update.author);
  const data = compact({ group, participants, by });
  const event: SessionEvent =
    update.action === 'add' ? { type: 'GroupParticipantsAdded', data } : { type: 'GroupParticipantsRemoved', data };
  return { events: [event], refresh: [] };
}
