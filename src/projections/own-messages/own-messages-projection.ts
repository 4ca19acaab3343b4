import type { NetworkMessage } from '../../domain/session/events.js';
import { idOfStream } from '../../domain/streams.js';
import type { Document, DocumentStore, WriteOp } from '../../infra/docstore/port.js';
import type { Projection } from '../projection.js';

/**
 * What became of each message the instance sends, for `GET /instances/{id}/messages/{message_id}`:
 * a minimal view of own messages (issue 29) until the full messages read model (issue 30) takes
 * the route over; kept in its own files so that it can simply be removed then.
 */
export const OWN_MESSAGES = 'own_messages';
export const OWN_POLL_VOTES = 'own_poll_votes';

/** Status ranks: a status never goes back (a late Delivered after Read changes nothing); failed and canceled end it. */
export const STATUS_RANK = { scheduled: 1, queued: 2, sent: 3, delivered: 4, read: 5, played: 6, failed: 100, canceled: 101 } as const;
export type OwnStatus = keyof typeof STATUS_RANK;

export interface OwnMessageDoc extends Document {
  _id: string;
  instance_id: string;
  message_id: string;
  chat_jid?: string;
  status_rank: number;
  message?: NetworkMessage;
  send_at?: string;
  error?: { code?: number; reason: string };
  edited_at?: string;
  edited_text?: string;
  revoked?: boolean;
}

export interface PollVoteDoc extends Document {
  _id: string;
  instance_id: string;
  poll_message_id: string;
  voter: string;
  options: string[];
}

const key = (instanceId: string, id: string) => `${instanceId}:${id}`;
const RECEIPT_RANK = { Delivered: STATUS_RANK.delivered, Read: STATUS_RANK.read, Played: STATUS_RANK.played } as const;
/** Messages that change another message rather than being one. */
const CHANGES = new Set(['reaction', 'edit', 'revoke', 'poll_vote']);

export function ownMessagesProjection(): Projection {
  return {
    name: 'own-messages',
    eventTypes: new Set(['SendScheduled', 'SendQueued', 'SendCanceled', 'SendAbandoned', 'MessageSent', 'MessageReceived', 'ReceiptReceived']),
    async setup(docs: DocumentStore) {
      await docs.collection(OWN_POLL_VOTES).createIndex({ name: 'poll', keys: { instance_id: 1, poll_message_id: 1 } });
    },
    apply(event) {
      const instanceId = idOfStream(event.streamId);
      const at = typeof event.metadata.occurredAt === 'string' ? event.metadata.occurredAt : event.created.toISOString();
      const own = (id: string, update: Record<string, unknown>, upsert = true): WriteOp => ({
        collection: OWN_MESSAGES,
        op: 'updateOne',
        filter: { _id: key(instanceId, id) },
        update: { ...update, ...(upsert ? { $setOnInsert: { instance_id: instanceId, message_id: id } } : {}) },
        ...(upsert ? { upsert: true } : {}),
      });
      switch (event.type) {
        case 'SendScheduled':
          return [own(event.data.message_id, { $max: { status_rank: STATUS_RANK.scheduled }, $set: { chat_jid: event.data.to, send_at: event.data.send_at } })];
        case 'SendQueued':
          return [own(event.data.message_id, { $max: { status_rank: STATUS_RANK.queued }, $set: { chat_jid: event.data.to } })];
        case 'SendCanceled':
          return [own(event.data.message_id, { $max: { status_rank: STATUS_RANK.canceled } })];
        case 'SendAbandoned':
          return [own(event.data.message_id, { $max: { status_rank: STATUS_RANK.failed }, $set: { error: { reason: event.data.reason } } })];
        case 'ReceiptReceived': {
          const d = event.data;
          if (d.state === 'Failed') {
            return d.message_ids.map((id) => own(id, { $max: { status_rank: STATUS_RANK.failed }, $set: { error: d.error ?? { reason: "refused by the network" } } }));
          }
          if (d.state === 'ReadSelf') return [];
          const rank = RECEIPT_RANK[d.state as keyof typeof RECEIPT_RANK];
          return d.message_ids.map((id) => own(id, { $max: { status_rank: rank } }, false));
        }
        case 'MessageSent':
        case 'MessageReceived': {
          const m = event.data.message;
          if (m.type === 'edit' && m.edit) return [own(m.edit.message_id, { $set: { edited_at: at, edited_text: m.text ?? '' } }, false)];
          if (m.type === 'revoke' && m.revoke) return [own(m.revoke.message_id, { $set: { revoked: true } }, false)];
          if (m.type === 'poll_vote' && m.poll_vote?.selected_options) {
            const voter = m.sender;
            const id = `${instanceId}:${m.poll_vote.poll_message_id}:${voter}`;
            const doc: PollVoteDoc = { _id: id, instance_id: instanceId, poll_message_id: m.poll_vote.poll_message_id, voter, options: m.poll_vote.selected_options };
            return [{ collection: OWN_POLL_VOTES, op: 'replaceOne', filter: { _id: id }, doc, upsert: true }];
          }
          if (event.type !== 'MessageSent' || !m.from_me || CHANGES.has(m.type)) return [];
          return [own(m.id, { $max: { status_rank: STATUS_RANK.sent }, $set: { chat_jid: m.chat, message: m } })];
        }
        default:
          return [];
      }
    },
  };
}
