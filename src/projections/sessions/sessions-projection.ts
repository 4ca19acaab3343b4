import { SESSION_STATUS_EVENT_TYPES, sessionStatusChange, type SessionStatus } from '../../domain/session/session-status.js';
import type { Document, DocumentStore, WriteOp } from '../../infra/docstore/port.js';
import { isOneOf, type RecordedEvent } from '../../domain/recorded.js';
import { SessionEventSchemas } from '../../domain/session/events.js';
import { occurredAt, type Projection } from '../projection.js';
import { idOfStream } from '../../domain/streams.js';

export const SESSION_STATUS = 'session_status';

/** What the session status route answers, kept per instance: the session's one fold
 * (domain/session/session-status.ts). The instance read model keeps its own copy of the session
 * fields it shows (one writer per collection, so replays cannot race). */
export interface SessionStatusDoc extends Document, SessionStatus {
  _id: string;
}


export const sessionsProjection: Projection = {
  name: 'sessions',
  eventTypes: new Set(SESSION_STATUS_EVENT_TYPES),

  async setup(docs: DocumentStore) {
    await docs.collection(SESSION_STATUS).createIndex({ name: 'paired', keys: { paired: 1 } });
  },

  /** Writes what the fold changes, as a patch: no read of the document. */
  apply(event): WriteOp[] {
    if (!isOneOf(SessionEventSchemas, event)) return [];
    const change = sessionStatusChange(event, occurredAt(event));
    if (change === null) return [];
    const update: Record<string, Record<string, unknown>> = { $set: change.set };
    if (change.unset.length > 0) update.$unset = Object.fromEntries(change.unset.map((f) => [f, '']));
    return [{ collection: SESSION_STATUS, op: 'updateOne', filter: { _id: idOfStream(event.streamId) }, update, upsert: true }];
  },
};
