import type { RecordedEvent } from '../port.js';
import { toRecordedEvent } from './records.js';
import type { Storage } from './storage.js';

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

export function readStreamEvents(storage: Storage, streamId: string, query: StreamQuery): RecordedEvent[] {
  const { forwards, fromRevision, maxCount, durableHead, expiredBefore } = query;
  const range = forwards
    ? { start: [streamId, fromRevision ?? 0], end: [streamId, MAX_REVISION], inclusiveEnd: true }
    : { start: [streamId, fromRevision ?? MAX_REVISION], end: [streamId, -1], reverse: true };
  const events: RecordedEvent[] = [];
  if (maxCount <= 0) return events;
  for (const { value: position } of storage.streams.getRange(range)) {
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

/** Log entries with after < position <= upTo; scavenged positions are simply absent. */
export function readLog(storage: Storage, after: number, upTo: number, maxCount: number): RecordedEvent[] {
  const events: RecordedEvent[] = [];
  if (upTo <= after || maxCount <= 0) return events;
  const range = { start: after + 1, end: upTo, inclusiveEnd: true, limit: Number.isFinite(maxCount) ? maxCount : undefined };
  for (const { key, value } of storage.log.getRange(range)) events.push(toRecordedEvent(value, key));
  return events;
}
