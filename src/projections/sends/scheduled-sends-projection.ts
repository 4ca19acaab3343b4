import type { SessionEventData } from '../../domain/session/events.js';
import { idOfStream } from '../../domain/streams.js';
import type { Actor } from '../../domain/actor.js';
import type { Document, DocumentStore } from '../../infra/docstore/port.js';
import { readAudit } from '../history/audit-metadata.js';
import type { Projection } from '../projection.js';

export const SCHEDULED_SENDS = 'scheduled_sends';

export type ScheduledSendDoc = Document & {
  /** The message id it goes out under. */
  _id: string;
  instance_id: string;
  account_id: string;
  /** pending until it fires: then sent, or queued (pacing made it wait), or abandoned; canceled by DELETE. */
  state: 'pending' | 'sent' | 'queued' | 'canceled' | 'abandoned';
  due_ms: number;
  attempts: number;
  correlation_id: string;
  actor: Actor;
  scheduled_event_id: string;
  send: SessionEventData<'SendScheduled'>;
};

/**
 * Scheduled sends, from the log: one document per SendScheduled, written only if absent; the
 * worker (commands/sending/scheduled-sends.ts) fires each once and marks it. A cancel or the send
 * itself in the log marks it too, so a read model rebuilt from scratch brings no finished send back.
 */
export function scheduledSendsProjection(onCommitted: () => void): Projection {
  return {
    name: 'scheduled-sends',
    eventTypes: new Set(['SendScheduled', 'SendCanceled', 'MessageSent', 'SendQueued']),
    async setup(docs: DocumentStore) {
      await docs.collection(SCHEDULED_SENDS).createIndex({ name: 'due', keys: { state: 1, due_ms: 1 }, partialFilterExpression: { state: 'pending' } });
    },
    apply(event) {
      const pending = (id: string, state: ScheduledSendDoc['state']) => [
        { collection: SCHEDULED_SENDS, op: 'updateOne' as const, filter: { _id: id, state: 'pending' }, update: { $set: { state } } },
      ];
      switch (event.type) {
        case 'SendScheduled': {
          const send = event.data;
          const fields: Omit<ScheduledSendDoc, '_id'> = {
            instance_id: idOfStream(event.streamId),
            account_id: typeof event.metadata.accountId === 'string' ? event.metadata.accountId : '',
            state: 'pending',
            due_ms: Date.parse(send.send_at),
            attempts: 0,
            correlation_id: typeof event.metadata.correlationId === 'string' ? event.metadata.correlationId : event.id,
            actor: readAudit(event.metadata).actor,
            scheduled_event_id: event.id,
            send,
          };
          return [{ collection: SCHEDULED_SENDS, op: 'updateOne', filter: { _id: send.message_id }, update: { $setOnInsert: fields }, upsert: true }];
        }
        case 'SendCanceled':
          return event.data.was === 'scheduled' ? pending(event.data.message_id, 'canceled') : [];
        case 'MessageSent':
          return event.data.origin === 'api' ? pending(event.data.message.id, 'sent') : [];
        case 'SendQueued':
          return pending(event.data.message_id, 'queued');
        default:
          return [];
      }
    },
    committed: () => onCommitted(),
  };
}
