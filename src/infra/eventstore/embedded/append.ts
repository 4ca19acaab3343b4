import { matchesExpectedRevision } from '../port.js';
import type { EventData, ExpectedRevision, JsonObject } from '../port.js';
import { jsonCopy } from './json-copy.js';
import type { RecentIds } from './recent-ids.js';
import { headOf, positionOf } from './stream-index.js';
import type { StreamIndex } from './stream-index.js';
import type { RecentLog } from './recent-log.js';
import type { StoredEvent } from './storage.js';
import { forgetUnsavedShapes } from '../../lmdb-shapes.js';

/** A wrong expected revision is an outcome, not an exception: it is answered after the flush too. */
export type AppendOutcome =
  | { ok: true; nextRevision: number; position: number }
  | { ok: false; actual: number };

/**
 * Rejects malformed input before it is queued. Data and metadata are reduced to their JSON form:
 * what an EventStoreDB adapter would store, a snapshot the caller can no longer mutate before
 * the commit, and values that cannot fail to encode once the append's first write is queued.
 * The copies are already the stored events, with the revision and the clock still to be filled
 * in by applyAppend: one object per event instead of a copy and then the stored form of it.
 */
export function prepareEvents(streamId: string, events: EventData[]): StoredEvent[] {
  if (typeof streamId !== 'string' || streamId === '') throw new Error('streamId must be a non-empty string');
  if (!Array.isArray(events)) throw new Error('events must be an array');
  // One event, the usual append, has no id to repeat.
  const seen = events.length > 1 ? new Set<string>() : undefined;
  return events.map((event) => {
    if (typeof event.id !== 'string' || event.id === '') throw new Error('event id must be a non-empty string');
    if (typeof event.type !== 'string' || event.type === '') throw new Error(`event ${event.id}: type must be a non-empty string`);
    if (seen?.has(event.id)) throw new Error(`event id ${event.id} appears twice in one append`);
    seen?.add(event.id);
    return {
      id: event.id,
      type: event.type,
      streamId,
      revision: -1,
      data: copyObject(event.data, `event ${event.id}: data`),
      metadata: copyObject(event.metadata, `event ${event.id}: metadata`),
      created: 0,
    };
  });
}

function copyObject(value: JsonObject, what: string): JsonObject {
  if (!isObject(value)) throw new Error(`${what} must be an object`);
  const copy = jsonCopy(value);
  if (!isObject(copy)) throw new Error(`${what} must be an object`);
  return copy;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** What an append needs: the in-memory state it checks and moves, and where its writes go. */
export interface AppendContext extends StreamIndex {
  recent: RecentIds;
  /** The newest entries as written, for subscribers at the head. */
  tail: RecentLog;
  /**
   * The log's last position, including appends whose commit is still pending: appends are checked
   * and placed here, in the order they are made, not inside a transaction. On disk the log's last
   * key says it (see lastPosition).
   */
  last: number;
  /**
   * Log entries queued but perhaps not committed yet, by position: lmdb's reads see only committed
   * data, and a retry's check may need them. The append forgets its own once committed.
   */
  pending: Map<number, StoredEvent>;
  /** Told the commit of every put queued (see GroupCommit). */
  writes: { queued(commit: Promise<unknown>): void };
}

/**
 * Checks an append against everything appended before it (committed or not: this process is the
 * only writer, and appends are applied in call order), then queues its writes with lmdb's
 * asynchronous puts, which all land in one transaction (one event turn). Checks come before the
 * first write: a rejected append writes nothing. Only the log is written, one put per event; the
 * stream entries go to UnindexedEvents.
 *
 * If queuing throws part-way (encoding an event, which cannot fail on JSON data short of lmdb
 * itself failing), the append is undone in memory, removes of its positions are queued behind
 * the puts it did queue (the same transaction: nothing of it lands), and it throws.
 */
export function applyAppend(
  context: AppendContext,
  streamId: string,
  events: StoredEvent[],
  expected: ExpectedRevision,
  created: number,
): AppendOutcome {
  const { storage, unindexed, recent, pending, writes } = context;
  const head = headOf(context, streamId);
  const retried = checkRetry(context, streamId, events, expected, head);
  if (retried) return retried;
  if (!matchesExpectedRevision(expected, BigInt(head))) return { ok: false, actual: head };

  const first = context.last + 1;
  if (events.length === 0) return { ok: true, nextRevision: head, position: first - 1 };
  const position = first + events.length - 1;
  try {
    for (let i = 0; i < events.length; i++) {
      const stored = events[i] as StoredEvent;
      stored.revision = head + 1 + i;
      stored.created = created;
      writes.queued(storage.log.put(first + i, stored));
      pending.set(first + i, stored);
      context.tail.add(first + i, stored);
      unindexed.add(streamId, stored.revision, first + i);
    }
  } catch (error) {
    for (let at = first; at <= position; at++) {
      if (pending.delete(at)) writes.queued(storage.log.remove(at));
    }
    unindexed.dropAfter(first - 1);
    context.tail.dropAfter(first - 1);
    // An event shape msgpackr made for it may not have been saved: read them back from the log.
    forgetUnsavedShapes(storage.log);
    throw error;
  }
  context.last = position;
  for (const event of events) recent.remember(streamId, event.id, event.revision);
  return { ok: true, nextRevision: head + events.length, position };
}

/**
 * EventStoreDB's idempotence rules, which are per stream (the same id in another stream is a new
 * event):
 * - exact revision E (or no_stream, E = -1) below the head: the append is a retry when the events
 *   right after E carry exactly its ids, in order; then it answers as the original did. Only the
 *   first matching: some but not all written, rejected. None: the ordinary wrong revision.
 * - any / stream_exists: the first id is looked up among recent appends; if found, the events
 *   from there must carry the rest of the ids, else it is rejected as partly written.
 * Anything else (E equal to the head included) is an ordinary append.
 */
function checkRetry(
  context: AppendContext,
  streamId: string,
  events: EventData[],
  expected: ExpectedRevision,
  head: number,
): AppendOutcome | undefined {
  const [firstEvent] = events;
  if (!firstEvent) return undefined;
  if (expected === 'any' || expected === 'stream_exists') {
    const revision = context.recent.revisionOf(streamId, firstEvent.id);
    if (revision === undefined) return undefined;
    return compareWithStream(context, streamId, events, revision - 1, head);
  }
  const after = expected === 'no_stream' ? -1 : Number(expected);
  if (after >= head) return undefined;
  return compareWithStream(context, streamId, events, after, head) ?? { ok: false, actual: head };
}

/**
 * Whether the stream's events after revision `after` are these events: the original result when
 * they all are, a rejection when only the first ones are, undefined when the first is not.
 */
function compareWithStream(
  context: AppendContext,
  streamId: string,
  events: EventData[],
  after: number,
  head: number,
): AppendOutcome | undefined {
  let position = -1;
  for (const [i, event] of events.entries()) {
    const revision = after + 1 + i;
    const at = revision <= head ? positionOf(context, streamId, revision) : undefined;
    // The log, not the cache, has the last word: a cached id may belong to a failed append.
    const stored = at === undefined ? undefined : (context.pending.get(at) ?? context.storage.log.get(at));
    if (at === undefined || stored?.id !== event.id) return i === 0 ? undefined : { ok: false, actual: head };
    position = at;
  }
  return { ok: true, nextRevision: after + events.length, position };
}
