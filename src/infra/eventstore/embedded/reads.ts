import type { RecordedEvent } from '../port.js';
import { toRecordedEvent } from './records.js';
import type { Storage } from './storage.js';
import type { StreamEntry } from './unindexed.js';

/** Upper bound for revision keys of one stream. */
export const MAX_REVISION = Number.MAX_SAFE_INTEGER;

export interface StreamQuery {
  forwards: boolean;
  fromRevision?: number;
  maxCount: number;
  /** Events beyond the durable head are not acknowledged yet and must stay invisible. */
  durableHead: number;
  /** Events created before this instant (epoch ms) are past the stream's maxAge. */
  expiredBefore: number;
}

/**
 * `unindexed` is the stream's newest revisions, not yet in the `streams` database. Entries may
 * be in both for a moment (indexed, not yet forgotten), so the database is read only below the
 * first unindexed revision: the two sources then join without gap or overlap.
 */
export function readStreamEvents(
  storage: Storage,
  unindexed: readonly StreamEntry[],
  streamId: string,
  query: StreamQuery,
): RecordedEvent[] {
  const { forwards, maxCount, durableHead, expiredBefore } = query;
  const events: RecordedEvent[] = [];
  if (maxCount <= 0) return events;
  for (const position of streamPositions(storage, unindexed, streamId, forwards, query.fromRevision)) {
    if (position > durableHead) {
      // Revisions are in position order: forwards, nothing later is durable either.
      if (forwards) break;
      continue;
    }
    const stored = storage.log.get(position);
    if (stored === undefined || stored.created < expiredBefore) continue;
    events.push(toRecordedEvent(stored, position));
    if (events.length >= maxCount) break;
  }
  return events;
}

/** Positions of the stream's events in revision order (or reverse), from `fromRevision` inclusive. */
function* streamPositions(
  storage: Storage,
  unindexed: readonly StreamEntry[],
  streamId: string,
  forwards: boolean,
  fromRevision: number | undefined,
): Generator<number> {
  const firstUnindexed = unindexed[0]?.revision ?? MAX_REVISION;
  if (forwards) {
    const from = fromRevision ?? 0;
    if (from < firstUnindexed) {
      const range = { start: [streamId, from], end: [streamId, firstUnindexed] };
      for (const { value } of storage.streams.getRange(range)) yield value;
    }
    for (const entry of unindexed) if (entry.revision >= from) yield entry.position;
  } else {
    const from = fromRevision ?? MAX_REVISION;
    for (let i = unindexed.length - 1; i >= 0; i--) {
      const entry = unindexed[i] as StreamEntry;
      if (entry.revision <= from) yield entry.position;
    }
    const start = Math.min(from, firstUnindexed - 1);
    if (start >= 0) {
      const range = { start: [streamId, start], end: [streamId, -1], reverse: true };
      for (const { value } of storage.streams.getRange(range)) yield value;
    }
  }
}

/** Log entries with after < position <= upTo; scavenged positions are simply absent. */
export function readLog(storage: Storage, after: number, upTo: number, maxCount: number): RecordedEvent[] {
  const events: RecordedEvent[] = [];
  if (upTo <= after || maxCount <= 0) return events;
  const range = { start: after + 1, end: upTo, inclusiveEnd: true, limit: Number.isFinite(maxCount) ? maxCount : undefined };
  for (const { key, value } of storage.log.getRange(range)) events.push(toRecordedEvent(value, key));
  return events;
}
