import type { RecordedEvent } from '../port.js';
import type { StoredEvent } from './storage.js';

/**
 * Values decoded from LMDB are fresh objects; entries served from the recent log (subscriptions
 * at the head) are frozen and shared. Readers of events never change them.
 */
export function toRecordedEvent(stored: StoredEvent, position: number): RecordedEvent {
  return {
    id: stored.id,
    type: stored.type,
    streamId: stored.streamId,
    revision: BigInt(stored.revision),
    position: BigInt(position),
    data: stored.data,
    metadata: stored.metadata,
    created: new Date(stored.created),
  };
}
