import { MAX_REVISION } from './reads.js';
import type { Storage } from './storage.js';

export interface RetentionRule {
  streamId: string;
  maxAgeSeconds: number;
}

export function retentionRules(storage: Storage): RetentionRule[] {
  const rules: RetentionRule[] = [];
  for (const { key, value } of storage.meta.getRange()) {
    if (value.maxAgeSeconds !== undefined) rules.push({ streamId: key, maxAgeSeconds: value.maxAgeSeconds });
  }
  return rules;
}

/**
 * Runs inside a write transaction. Deletes up to `limit` of the stream's oldest events created
 * before `expiredBefore` from the stream index and the log; returns how many. Only indexed events
 * are seen, so the caller indexes everything first.
 * Stops at the first event still inside the retention window: events are appended in clock
 * order, so anything after it is younger (if the clock stepped back, a later scavenge gets it).
 * The stream head is kept, so revisions continue where they were.
 */
export function deleteExpired(storage: Storage, streamId: string, expiredBefore: number, limit: number): number {
  const range = { start: [streamId, 0], end: [streamId, MAX_REVISION], inclusiveEnd: true };
  const doomed: Array<{ key: [string, number]; position: number }> = [];
  for (const { key, value: position } of storage.streams.getRange(range)) {
    if (doomed.length >= limit) break;
    const stored = storage.log.get(position);
    if (stored !== undefined && stored.created >= expiredBefore) break;
    doomed.push({ key, position });
  }
  for (const { key, position } of doomed) {
    storage.streams.removeSync(key);
    storage.log.removeSync(position);
  }
  return doomed.length;
}
