import type { BaileysEventMap, GroupMetadata, GroupParticipant } from '@whiskeysockets/baileys';
import type { SessionEvent, SessionEventData } from '../../domain/session/events.js';
import { compact } from './compact.js';
import { participantOf } from './group-translator.js';
import { normalizeJid } from './jid.js';
import type { TranslateContext } from './message-translator.js';

type Changes = SessionEventData<'GroupUpdated'>['changes'];
type Participant = SessionEventData<'GroupParticipantsAdded'>['participants'][number];

/**
 * Who changed what in a group, as the network's group notifications say it: a partial
 * `groups.update` (subject, description, settings, timer, link) becomes GroupUpdated with its
 * author; promotions and demotions become GroupParticipantsPromoted / Demoted; a removal that
 * names this account becomes GroupLeft. The whole group is still fetched and upserted beside
 * these (group-translator.ts): these say what happened, that says what the group is now.
 */
export function groupChangeEvents(batch: Partial<BaileysEventMap>, ctx: TranslateContext): SessionEvent[] {
  const events: SessionEvent[] = [];
  for (const update of batch['groups.update'] ?? []) {
    if (isComplete(update)) continue;
    const group = normalizeJid(update.id);
    if (!group) continue;
    const changes = changesOf(update);
    const by = normalizeJid(update.authorPn) ?? normalizeJid(update.author);
    if (update.inviteCode !== undefined) events.push({ type: 'GroupInviteRevoked', data: compact({ group, by }) });
    if (Object.keys(changes).length > 0) events.push({ type: 'GroupUpdated', data: compact({ group, changes, by }) });
  }
  const membership = batch['group-participants.update'];
  if (membership) {
    const group = normalizeJid(membership.id);
    const by = normalizeJid(membership.authorPn) ?? normalizeJid(membership.author);
    const participants = (membership.participants as (GroupParticipant | string)[])
      .map((p) => participantOf(typeof p === 'string' ? { id: p } : p))
      .filter((p): p is Participant => !!p);
    if (group && participants.length > 0) {
      if (membership.action === 'promote') {
        events.push({ type: 'GroupParticipantsPromoted', data: compact({ group, participants: participants.map((p) => ({ ...p, is_admin: true })), by }) });
      } else if (membership.action === 'demote') {
        events.push({ type: 'GroupParticipantsDemoted', data: compact({ group, participants: participants.map((p) => ({ ...p, is_admin: false, is_super_admin: false })), by }) });
      } else if (membership.action === 'remove' && participants.some((p) => isMe(p, ctx))) {
        events.push({ type: 'GroupLeft', data: compact({ group, by }) });
      }
    }
  }
  return events;
}

function changesOf(update: Partial<GroupMetadata>): Changes {
  const changes: Changes = {};
  if (typeof update.subject === 'string') changes.name = update.subject;
  if (update.desc !== undefined) {
    changes.topic = update.desc ?? '';
    if (!update.desc) changes.topic_deleted = true;
  }
  if (typeof update.announce === 'boolean') changes.is_announce = update.announce;
  if (typeof update.restrict === 'boolean') changes.is_locked = update.restrict;
  if (typeof update.ephemeralDuration === 'number') changes.disappearing_timer = update.ephemeralDuration;
  return changes;
}

function isMe(p: Participant, ctx: TranslateContext): boolean {
  const me = [normalizeJid(ctx.me?.jid), normalizeJid(ctx.me?.lid)].filter((j): j is string => !!j);
  return [p.jid, p.phone_number, p.lid].some((j) => j !== undefined && me.includes(j));
}

function isComplete(update: Partial<GroupMetadata>): boolean {
  return typeof update.id === 'string' && typeof update.subject === 'string' && Array.isArray(update.participants);
}
