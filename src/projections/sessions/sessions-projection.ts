import type { SessionEventData } from '../../domain/session/events.js';
import type { Document, DocumentStore, WriteOp } from '../../infra/docstore/port.js';
import type { RecordedEvent } from '../../domain/recorded.js';
import { occurredAt, type Projection } from '../projection.js';
import { idOfStream } from '../../domain/streams.js';

export const SESSION_STATUS = 'session_status';

/** What the session status route answers, kept per instance. The instance read model keeps its
 * own copy of the session fields it shows (one writer per collection, so replays cannot race). */
export interface SessionStatusDoc extends Document {
  _id: string;
  /** Credentials exist: the manager reconnects it at boot. */
  paired: boolean;
  connected: boolean;
  phone?: string;
  jid?: string;
  lid?: string;
  push_name?: string;
  business?: boolean;
  about?: string;
  picture_id?: string;
  picture_url?: string;
  verified_name?: string;
  business_name?: string;
  business_profile?: SessionEventData<'ProfileUpdated'>['business'];
  connected_at?: string;
  last_disconnect?: { reason: string; at: string; message?: string };
}

function status(event: RecordedEvent, set: Record<string, unknown>, unset: string[] = []): WriteOp {
  const update: Record<string, Record<string, unknown>> = { $set: set };
  if (unset.length > 0) update.$unset = Object.fromEntries(unset.map((f) => [f, '']));
  return { collection: SESSION_STATUS, op: 'updateOne', filter: { _id: idOfStream(event.streamId) }, update, upsert: true };
}

/** The profile fields a ProfileUpdated carries and the status keeps under the same names. */
export const PROFILE_FIELDS = ['push_name', 'about', 'picture_id', 'picture_url', 'verified_name', 'business_name'] as const;

export const sessionsProjection: Projection = {
  name: 'sessions',
  eventTypes: new Set(['SessionConnected', 'SessionDisconnected', 'SessionLoggedOut', 'ProfileUpdated']),

  async setup(docs: DocumentStore) {
    await docs.collection(SESSION_STATUS).createIndex({ name: 'paired', keys: { paired: 1 } });
  },

  apply(event) {
    const at = occurredAt(event);
    switch (event.type) {
      case 'SessionConnected': {
        const d = event.data;
        const set: Record<string, unknown> = { paired: true, connected: true, phone: d.phone, jid: d.jid, business: d.business, connected_at: at };
        if (d.push_name !== undefined) set.push_name = d.push_name;
        if (d.lid !== undefined) set.lid = d.lid;
        return [status(event, set)];
      }
      case 'SessionDisconnected': {
        const d = event.data;
        return [status(event, { connected: false, last_disconnect: { reason: d.reason, at, ...(d.message === undefined ? {} : { message: d.message }) } })];
      }
      case 'SessionLoggedOut':
        return [
          status(event, { paired: false, connected: false }, [
            'phone', 'jid', 'lid', 'push_name', 'business', 'about', 'picture_id', 'picture_url', 'verified_name', 'business_name', 'business_profile', 'connected_at',
          ]),
        ];
      case 'ProfileUpdated': {
        const d = event.data;
        const set: Record<string, unknown> = {};
        for (const field of PROFILE_FIELDS) if (d[field] !== undefined) set[field] = d[field];
        if (d.business !== undefined) set.business_profile = d.business;
        return [status(event, set)];
      }
      default:
        return [];
    }
  },
};
