import type { RecordedOf } from '../../domain/recorded.js';
import type { WriteOp } from '../../infra/docstore/port.js';
import { GROUPS, groupDoc, groupKey } from './groups-projection.js';

type GroupChangeEvent = RecordedOf<'GroupCreated' | 'GroupUpdated' | 'GroupParticipantsPromoted' | 'GroupParticipantsDemoted' | 'GroupInviteRevoked' | 'GroupLeft'>;

/**
 * Changes to a group made anywhere (the API, the phone, another admin): the group list follows
 * each as it is told, before (or without) the fresh metadata that usually comes after it.
 */
export function groupChangeWrites(instanceId: string, event: GroupChangeEvent): WriteOp[] {
  switch (event.type) {
    case 'GroupCreated': {
      const g = event.data.group;
      return [{ collection: GROUPS, op: 'replaceOne', filter: { _id: groupKey(instanceId, g.jid) }, doc: groupDoc(instanceId, g), upsert: true }];
    }
    case 'GroupUpdated': {
      const c = event.data.changes;
      const set: Record<string, unknown> = {};
      if (c.name !== undefined) set.name = c.name;
      if (c.topic !== undefined) set.topic = c.topic;
      if (c.topic_deleted !== undefined || c.topic !== undefined) set.topic_deleted = c.topic_deleted ?? false;
      if (c.is_announce !== undefined) set.is_announce = c.is_announce;
      if (c.is_locked !== undefined) set.is_locked = c.is_locked;
      if (c.disappearing_timer !== undefined) Object.assign(set, { disappearing_timer: c.disappearing_timer, is_ephemeral: c.disappearing_timer > 0 });
      if (c.picture_id !== undefined) set.picture_id = c.picture_id;
      if (Object.keys(set).length === 0) return [];
      return [{ collection: GROUPS, op: 'updateOne', filter: { _id: groupKey(instanceId, event.data.group) }, update: { $set: set } }];
    }
    case 'GroupParticipantsPromoted':
    case 'GroupParticipantsDemoted': {
      const d = event.data;
      const filter = { _id: groupKey(instanceId, d.group) };
      const promoted = event.type === 'GroupParticipantsPromoted';
      const people = d.participants.map((p) => ({ ...p, is_admin: promoted, is_super_admin: promoted ? p.is_super_admin : false }));
      // The network changes roles of members only: each is taken out and put back with the new role.
      return [
        { collection: GROUPS, op: 'updateOne', filter, update: { $pull: { participants: { jid: { $in: people.map((p) => p.jid) } } } } },
        { collection: GROUPS, op: 'updateOne', filter, update: { $push: { participants: { $each: people } } } },
      ];
    }
    case 'GroupInviteRevoked':
      return [{ collection: GROUPS, op: 'updateOne', filter: { _id: groupKey(instanceId, event.data.group) }, update: { $set: { invite_code: '' } } }];
    case 'GroupLeft':
      return [{ collection: GROUPS, op: 'deleteOne', filter: { _id: groupKey(instanceId, event.data.group) } }];
  }
}
