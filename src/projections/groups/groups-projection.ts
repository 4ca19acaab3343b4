import type { SessionEventData } from '../../domain/session/events.js';
import type { Document, DocumentStore, WriteOp } from '../../infra/docstore/port.js';
import type { Projection } from '../projection.js';
import { idOfStream } from '../../domain/streams.js';
import { groupChangeWrites } from './group-changes.js';

export const GROUPS = 'groups';
export const LID_MAP = 'lid_map';

type GroupInfo = SessionEventData<'GroupsUpserted'>['groups'][number];
type Participant = GroupInfo['participants'][number];

export interface GroupDoc extends Document {
  _id: string;
  instance_id: string;
  jid: string;
  owner_jid: string;
  owner_pn: string;
  name: string;
  topic: string;
  topic_deleted: boolean;
  is_locked: boolean;
  is_announce: boolean;
  is_ephemeral: boolean;
  disappearing_timer: number;
  group_created: string;
  invite_code: string;
  is_community: boolean;
  community_jid: string;
  participants: Participant[];
  /** The group's picture id when a change told it ('' removed or unknown). */
  picture_id?: string;
}

export interface LidDoc extends Document {
  _id: string;
  instance_id: string;
  lid: string;
  pn: string;
}

export const groupKey = (instanceId: string, jid: string) => `${instanceId}:${jid}`;

/** Phone numbers and LIDs are both kept: replying to a LID-only sender needs the pair. */
function lidPairs(instanceId: string, pairs: { pn?: string; lid?: string }[]): WriteOp[] {
  return pairs.flatMap(({ pn, lid }) =>
    pn && lid
      ? [{ collection: LID_MAP, op: 'replaceOne' as const, filter: { _id: `${instanceId}:${lid}` }, doc: { _id: `${instanceId}:${lid}`, instance_id: instanceId, lid, pn }, upsert: true }]
      : [],
  );
}

export function groupDoc(instanceId: string, g: GroupInfo): GroupDoc {
  return {
    _id: groupKey(instanceId, g.jid),
    instance_id: instanceId,
    jid: g.jid,
    owner_jid: g.owner_jid ?? '',
    owner_pn: g.owner_pn ?? '',
    name: g.name,
    topic: g.topic ?? '',
    topic_deleted: g.topic_deleted ?? false,
    is_locked: g.is_locked,
    is_announce: g.is_announce,
    is_ephemeral: g.is_ephemeral,
    disappearing_timer: g.disappearing_timer,
    group_created: g.created_s ? new Date(g.created_s * 1000).toISOString() : '',
    invite_code: g.invite_code ?? '',
    is_community: g.is_community ?? false,
    community_jid: g.community_jid ?? '',
    participants: g.participants,
  };
}

export const groupsProjection: Projection = {
  name: 'groups',
  eventTypes: new Set([
    'GroupsUpserted',
    'GroupParticipantsAdded',
    'GroupParticipantsRemoved',
    'LidMappingLearned',
    'MessageReceived',
    'SessionLoggedOut',
    // Changes made anywhere (group-changes.ts).
    'GroupCreated',
    'GroupUpdated',
    'GroupParticipantsPromoted',
    'GroupParticipantsDemoted',
    'GroupInviteRevoked',
    'GroupLeft',
  ]),

  async setup(docs: DocumentStore) {
    await docs.collection(GROUPS).createIndex({ name: 'instance_name', keys: { instance_id: 1, name: 1 } });
    await docs.collection(LID_MAP).createIndex({ name: 'instance_pn', keys: { instance_id: 1, pn: 1 } });
  },

  apply(event) {
    const instanceId = idOfStream(event.streamId);
    switch (event.type) {
      case 'GroupsUpserted': {
        const d = event.data;
        return d.groups.flatMap((g) => [
          { collection: GROUPS, op: 'replaceOne' as const, filter: { _id: groupKey(instanceId, g.jid) }, doc: groupDoc(instanceId, g), upsert: true },
          ...lidPairs(instanceId, g.participants.map((p) => ({ pn: p.phone_number, lid: p.lid }))),
        ]);
      }
      case 'GroupParticipantsAdded': {
        const d = event.data;
        const jids = d.participants.map((p) => p.jid);
        // Pull first so a re-add replaces the old entry instead of duplicating it.
        return [
          { collection: GROUPS, op: 'updateOne', filter: { _id: groupKey(instanceId, d.group) }, update: { $pull: { participants: { jid: { $in: jids } } } } },
          { collection: GROUPS, op: 'updateOne', filter: { _id: groupKey(instanceId, d.group) }, update: { $push: { participants: { $each: d.participants } } } },
          ...lidPairs(instanceId, d.participants.map((p) => ({ pn: p.phone_number, lid: p.lid }))),
        ];
      }
      case 'GroupParticipantsRemoved': {
        const d = event.data;
        return [
          {
            collection: GROUPS,
            op: 'updateOne',
            filter: { _id: groupKey(instanceId, d.group) },
            update: { $pull: { participants: { jid: { $in: d.participants.map((p) => p.jid) } } } },
          },
        ];
      }
      case 'LidMappingLearned':
        return lidPairs(instanceId, event.data.pairs);
      case 'MessageReceived': {
        const m = event.data.message;
        return lidPairs(instanceId, [{ pn: m.sender_pn, lid: m.sender_lid }]);
      }
      case 'GroupCreated':
      case 'GroupUpdated':
      case 'GroupParticipantsPromoted':
      case 'GroupParticipantsDemoted':
      case 'GroupInviteRevoked':
      case 'GroupLeft':
        return groupChangeWrites(instanceId, event);
      case 'SessionLoggedOut':
        // Another account may pair next: what this one saw is not its business.
        return [
          { collection: GROUPS, op: 'deleteMany', filter: { instance_id: instanceId } },
          { collection: LID_MAP, op: 'deleteMany', filter: { instance_id: instanceId } },
        ];
      default:
        return [];
    }
  },
};
