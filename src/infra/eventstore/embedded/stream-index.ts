import type { RecentIds } from './recent-ids.js';
import { INDEXED_THROUGH, indexedThrough, lastPosition } from './storage.js';
import type { Storage } from './storage.js';
import type { UnindexedEvents } from './unindexed.js';

/**
 * The stream index as the store sees it: the durable `streams`/`heads` databases for events up
 * to INDEXED_THROUGH, and the in-memory UnindexedEvents for the rest.
 */
export interface StreamIndex {
  storage: Storage;
  unindexed: UnindexedEvents;
}

/** Head revision of the stream, -1 when it does not exist. */
export function headOf({ storage, unindexed }: StreamIndex, streamId: string): number {
  return unindexed.head(streamId) ?? storage.heads.get(streamId) ?? -1;
}

export function positionOf({ storage, unindexed }: StreamIndex, streamId: string, revision: number): number | undefined {
  return unindexed.positionOf(streamId, revision) ?? storage.streams.get([streamId, revision]);
}

/**
 * Runs inside a write transaction: writes every unindexed entry to `streams` and `heads` and
 * moves INDEXED_THROUGH to `through`, the log's last position in this transaction (the store
 * holds it; LAST_POSITION is written at the end of the batch). Returns it; the caller forgets the
 * entries up to it only once this transaction is committed, so readers never miss them.
 * Bulk indexing is the point: a thousand events of fifty streams dirty about fifty index pages
 * once, instead of fifty pages in every commit.
 */
export function writeIndex({ storage, unindexed }: StreamIndex, through: number): number {
  for (const [streamId, entries] of unindexed.streams()) {
    let head: number | undefined;
    for (const { revision, position } of entries) {
      storage.streams.putSync([streamId, revision], position);
      head = revision;
    }
    if (head !== undefined) storage.heads.putSync(streamId, head);
  }
  storage.state.putSync(INDEXED_THROUGH, through);
  return through;
}

/**
 * At open: what a crash left unindexed is the log after INDEXED_THROUGH; read it back into memory.
 * The last `warm` log events also seed the recent-id cache, so a client retrying just after a
 * restart is still answered idempotently.
 */
export function recover({ storage, unindexed }: StreamIndex, recent: RecentIds, warm: number): void {
  const indexed = indexedThrough(storage);
  const from = Math.min(indexed + 1, Math.max(0, lastPosition(storage) - warm + 1));
  for (const { key, value } of storage.log.getRange({ start: from })) {
    if (key > indexed) unindexed.add(value.streamId, value.revision, key);
    recent.remember(value.streamId, value.id, value.revision);
  }
}
