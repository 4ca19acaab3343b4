import type { RecordedEvent } from '../port.js';
import type { StoredEvent } from './storage.js';

/** Values decoded from LMDB are already fresh objects, so callers may mutate what they get. */
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
