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
 * Writes every unindexed entry up to position `through` to `streams` and `heads`, then moves
 * INDEXED_THROUGH to `through`, with lmdb's asynchronous puts: lmdb's write thread does the
 * B-tree work, where inside a transaction callback the event loop did it, a couple of
 * milliseconds per bulk with the write lock held and every append of the batch waiting.
 * INDEXED_THROUGH goes last, so in whichever commit it lands, the entries it vouches for are in
 * the same or an earlier one (a crash in between only replays a little more at open).
 * Resolves once all of it is committed; the caller forgets the entries up to `through` only then,
 * so readers never miss them. Bulk indexing is the point: a thousand events of fifty streams
 * dirty about fifty index pages once, instead of fifty pages in every commit.
 */
export async function writeIndex({ storage, unindexed }: StreamIndex, through: number): Promise<void> {
  const commits = new Set<Promise<boolean>>();
  for (const [streamId, entries] of unindexed.streams()) {
    let head: number | undefined;
    for (const { revision, position } of entries) {
      if (position > through) break; // appended since: the next bulk's
      commits.add(storage.streams.put([streamId, revision], position));
      head = revision;
    }
    if (head !== undefined) commits.add(storage.heads.put(streamId, head));
  }
  commits.add(storage.state.put(INDEXED_THROUGH, through));
  // Puts of one event turn share one commit (one promise); await each distinct one, so none rejects unheard.
  await Promise.all(commits);
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
