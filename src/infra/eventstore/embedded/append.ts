import { matchesExpectedRevision } from '../port.js';
import type { EventData, ExpectedRevision, JsonObject } from '../port.js';
import { LAST_POSITION, lastPosition } from './storage.js';
import type { IdEntry, Storage } from './storage.js';

/** A wrong expected revision is an outcome, not an exception: see GroupCommit. */
export type AppendOutcome =
  | { ok: true; nextRevision: number; position: number }
  | { ok: false; actual: number };

/**
 * Rejects malformed input before it is queued. Data and metadata are reduced to their JSON form:
 * what an EventStoreDB adapter would store, a snapshot the caller can no longer mutate before
 * the commit, and values that cannot fail to encode inside the write transaction.
 */
export function prepareEvents(streamId: string, events: EventData[]): EventData[] {
  if (typeof streamId !== 'string' || streamId === '') throw new Error('streamId must be a non-empty string');
  if (!Array.isArray(events)) throw new Error('events must be an array');
  const seen = new Set<string>();
  return events.map((event) => {
    if (typeof event.id !== 'string' || event.id === '') throw new Error('event id must be a non-empty string');
    if (typeof event.type !== 'string' || event.type === '') throw new Error(`event ${event.id}: type must be a non-empty string`);
    if (seen.has(event.id)) throw new Error(`event id ${event.id} appears twice in one append`);
    seen.add(event.id);
    return {
      id: event.id,
      type: event.type,
      data: copyObject(event.data, `event ${event.id}: data`),
      metadata: copyObject(event.metadata, `event ${event.id}: metadata`),
    };
  });
}

function copyObject(value: JsonObject, what: string): JsonObject {
  if (!isObject(value)) throw new Error(`${what} must be an object`);
  const copy: unknown = JSON.parse(JSON.stringify(value));
  if (!isObject(copy)) throw new Error(`${what} must be an object`);
  return copy;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Runs inside the write transaction, so the expected-revision check, the idempotency check and
 * position assignment see every earlier append, including those of the same group commit.
 * Checks come before the first write: a rejected append writes nothing.
 */
export function applyAppend(
  storage: Storage,
  streamId: string,
  events: EventData[],
  expected: ExpectedRevision,
  created: number,
): AppendOutcome {
  const head = storage.heads.get(streamId) ?? -1;
  const known = events.map((event) => storage.ids.get(event.id));
  const retried = allInStream(known, streamId);
  if (retried) return { ok: true, nextRevision: retried.revision, position: retried.position };
  // Some ids known, or known elsewhere: not a clean retry, and writing would duplicate ids.
  if (known.some((entry) => entry !== undefined)) return { ok: false, actual: head };
  if (!matchesExpectedRevision(expected, BigInt(head))) return { ok: false, actual: head };

  const first = lastPosition(storage) + 1;
  if (events.length === 0) return { ok: true, nextRevision: head, position: first - 1 };
  events.forEach((event, i) => {
    const revision = head + 1 + i;
    const position = first + i;
    storage.log.putSync(position, { ...event, streamId, revision, created });
    storage.streams.putSync([streamId, revision], position);
    storage.ids.putSync(event.id, { streamId, revision, position });
  });
  const nextRevision = head + events.length;
  const position = first + events.length - 1;
  storage.heads.putSync(streamId, nextRevision);
  storage.state.putSync(LAST_POSITION, position);
  return { ok: true, nextRevision, position };
}

/** The entry of the batch's last event when every id is already stored in this stream. */
function allInStream(known: Array<IdEntry | undefined>, streamId: string): IdEntry | undefined {
  let last: IdEntry | undefined;
  for (const entry of known) {
    if (entry?.streamId !== streamId) return undefined;
    last = entry;
  }
  return last;
}
