import type { SessionEvent } from '../../domain/session/events.js';
import { userJid } from './addresses.js';
import type { ParticipantsChange } from './groups.js';
import type { Registry } from './registry.js';
import type { GroupDoc } from './state.js';
import { groupInfo, participant } from './views.js';

/** A new group shows up in each member's group list. */
export async function announceGroup(registry: Registry, group: GroupDoc): Promise<void> {
  const event: SessionEvent = { type: 'GroupsUpserted', data: { groups: [groupInfo(group)] } };
  for (const member of group.participants) await registry.toPhone(member.phone, [event]);
}

/**
 * Everyone concerned hears of a membership change: the members before and after (so the added
 * and the removed too). Those still members also get the group's new state.
 */
export async function announceParticipants(registry: Registry, change: ParticipantsChange, by: string): Promise<void> {
  const { before, after, added, removed } = change;
  const group = after._id;
  const events: SessionEvent[] = [];
  if (added.length > 0) events.push({ type: 'GroupParticipantsAdded', data: { group, participants: added.map(participant), by: userJid(by) } });
  if (removed.length > 0) {
    events.push({ type: 'GroupParticipantsRemoved', data: { group, participants: removed.map(participant), by: userJid(by) } });
  }
  const upserted: SessionEvent = { type: 'GroupsUpserted', data: { groups: [groupInfo(after)] } };
  const concerned = new Set([...before.participants, ...after.participants].map((p) => p.phone));
  for (const phone of concerned) {
    const stillMember = after.participants.some((p) => p.phone === phone);
    await registry.toPhone(phone, stillMember ? [...events, upserted] : events);
  }
}
