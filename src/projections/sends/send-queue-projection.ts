import type { SessionEventData } from '../../domain/session/events.js';
import type { Document, DocumentStore } from '../../infra/docstore/port.js';
import type { Projection } from '../projection.js';
import type { Actor } from '../../domain/actor.js';
import { readAudit } from '../history/audit-metadata.js';
import { idOfStream } from '../../domain/streams.js';
import { laneOnQueued, SEND_LANES } from './send-lanes.js';

export const SEND_QUEUE = 'send_queue';

export type QueuedSendDoc = Document & {
  /** The message id it goes out under. */
  _id: string;
  instance_id: string;
  account_id: string;
  pos: number;
  state: 'pending' | 'sent' | 'abandoned' | 'canceled';
  attempts: number;
  due_ms: number;
  queued_ms: number;
  correlation_id: string;
  /** Who asked for the send, and the event that queued it: the MessageSent is theirs. */
  actor: Actor;
  queued_event_id: string;
  send: SessionEventData<'SendQueued'>;
  /** Why the last attempt failed, while it waits to be tried again. */
  last_error?: string;
};

/**
 * Queued sends, from the log: one document per SendQueued, written only if absent, so a replay
 * never brings back a send that went out, and its chat's lane (send-lanes.ts). The queue worker
 * sends each chat's in order and marks them.
 */
export function sendQueueProjection(onCommitted: () => void): Projection {
  return {
    name: 'send-queue',
    eventTypes: new Set(['SendQueued']),
    async setup(docs: DocumentStore) {
      await docs.collection(SEND_QUEUE).createIndex({ name: 'pending', keys: { state: 1, pos: 1 }, partialFilterExpression: { state: 'pending' } });
      // A lane's next send: its chat's first pending one.
      await docs.collection(SEND_QUEUE).createIndex({ name: 'pending_by_chat', keys: { state: 1, instance_id: 1, 'send.to': 1, pos: 1 }, partialFilterExpression: { state: 'pending' } });
      // The worker reads the due lanes, soonest first (an earlier layout read every lane by head).
      await docs.collection(SEND_LANES).dropIndex('by_head');
      await docs.collection(SEND_LANES).createIndex({ name: 'by_due', keys: { due_ms: 1 } });
    },
    apply(event) {
      if (event.type !== 'SendQueued') return [];
      const send = event.data;
      const queuedMs = Date.parse(typeof event.metadata.occurredAt === 'string' ? event.metadata.occurredAt : event.created.toISOString());
      const fields: Omit<QueuedSendDoc, '_id'> = {
        instance_id: idOfStream(event.streamId),
        account_id: typeof event.metadata.accountId === 'string' ? event.metadata.accountId : '',
        pos: Number(event.position),
        state: 'pending',
        attempts: 0,
        due_ms: 0,
        queued_ms: queuedMs,
        correlation_id: typeof event.metadata.correlationId === 'string' ? event.metadata.correlationId : event.id,
        actor: readAudit(event.metadata).actor,
        queued_event_id: event.id,
        send,
      };
      return [
        { collection: SEND_QUEUE, op: 'updateOne', filter: { _id: send.message_id }, update: { $setOnInsert: fields }, upsert: true },
        // A replay makes a lane whose head went out already: the worker moves such a head on.
        laneOnQueued(idOfStream(event.streamId), send.to, send.message_id, Number(event.position)),
      ];
    },
    committed: () => onCommitted(),
  };
}
