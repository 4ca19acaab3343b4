import { open } from 'lmdb';
import type { Database, DatabaseOptions, RootDatabase } from 'lmdb';
import type { JsonObject } from '../port.js';

/** One event as kept in the global log; its position is the log key. */
export interface StoredEvent {
  id: string;
  type: string;
  streamId: string;
  revision: number;
  data: JsonObject;
  metadata: JsonObject;
  /** Store clock, epoch milliseconds. */
  created: number;
}

interface StoredMetadata {
  maxAgeSeconds?: number;
}

/**
 * One LMDB environment with a named database per structure. Numbers inside (positions < 2^53);
 * bigint only at the port.
 *
 * The log is the only thing an append writes. The stream index and heads
 * are derived from it and written later, many events per transaction (see indexing.ts): indexing
 * in the append transaction dirtied one index page per stream touched, several times the bytes
 * of the events themselves, and that write volume capped group-commit throughput.
 */
export interface Storage {
  env: RootDatabase;
  /** position → event. */
  log: Database<StoredEvent, number>;
  /** [streamId, revision] → position, for events up to INDEXED_THROUGH. */
  streams: Database<number, [string, number]>;
  /** streamId → head revision as of INDEXED_THROUGH; survives scavenging of the stream's events. */
  heads: Database<number, string>;
  meta: Database<StoredMetadata, string>;
  /** Singletons, see LAST_POSITION and INDEXED_THROUGH. */
  state: Database<number, string>;
}

/**
 * A floor for the last position ever assigned: the log's own last key is the other (see
 * lastPosition). Scavenging writes it before it deletes, since it may delete the log's tail and
 * positions must never be reused; appends do not, their log entries say it already.
 */
export const LAST_POSITION = 'lastPosition';

/** Every log entry up to this position is in `streams` and `heads`; later ones are replayed at open. */
export const INDEXED_THROUGH = 'indexedThrough';

/**
 * Where the log keeps the field lists its events share (msgpackr records): an event then names
 * its shape by number instead of spelling out every field name, and decoding it is four times
 * cheaper (a rebuild reads the whole log; so does every projection catching up) and a third
 * smaller. Events written before carry their field names inline and still decode. The key is a
 * symbol, which sorts before every position, so no read of positions meets it.
 */
const LOG_STRUCTURES = Symbol.for('structures');
/**
 * Room for every event type's shapes (its data, nested objects such as a message, metadata and
 * actor), and for the key sets tenants choose (an instance's labels are an object with their own
 * keys: each new set of them is a shape); a shape beyond it is written inline, as all were before.
 * Never lowered: with more shapes saved than the limit, msgpackr refuses every write.
 */
const MAX_SHARED_STRUCTURES = 1024;
/** `maxSharedStructures` is a msgpackr option lmdb passes on; its typings leave it out. */
const LOG_OPTIONS: DatabaseOptions & { name: string; maxSharedStructures: number } = {
  name: 'log',
  sharedStructuresKey: LOG_STRUCTURES,
  maxSharedStructures: MAX_SHARED_STRUCTURES,
};

export function openStorage(path: string): Storage {
  const env = open({ path, maxDbs: 8 });
  const storage: Storage = {
    env,
    log: env.openDB<StoredEvent, number>(LOG_OPTIONS),
    streams: env.openDB<number, [string, number]>({ name: 'streams' }),
    heads: env.openDB<number, string>({ name: 'heads' }),
    meta: env.openDB<StoredMetadata, string>({ name: 'meta' }),
    state: env.openDB<number, string>({ name: 'state' }),
  };
  // Stores written before INDEXED_THROUGH existed indexed every event in its append transaction.
  // Recording that now, before any append, keeps a later crash from being mistaken for it.
  if (storage.state.get(INDEXED_THROUGH) === undefined) storage.state.putSync(INDEXED_THROUGH, lastPosition(storage));
  dropLegacyIdIndex(env);
  return storage;
}

/**
 * Earlier versions kept a global event-id index; idempotence is now checked per stream the way
 * EventStoreDB does it (see append.ts), so the index is dead weight and is removed once.
 */
function dropLegacyIdIndex(env: RootDatabase): void {
  // `create` is an lmdb option its typings leave out; a variable avoids the excess-property check.
  const existingOnly = { name: 'ids', create: false };
  let legacy: Database<unknown, string> | undefined;
  try {
    // lmdb answers a missing database with undefined or 'Database not found', by version.
    legacy = env.openDB<unknown, string>(existingOnly);
  } catch (error) {
    if (error instanceof Error && error.message === 'Database not found') return;
    throw error;
  }
  legacy?.dropSync();
}

/** The last position ever assigned: LAST_POSITION or the log's last key, whichever is later. */
export function lastPosition(storage: Storage): number {
  const floor = storage.state.get(LAST_POSITION) ?? -1;
  // Newest first; the shapes' key is a symbol, which sorts before every position.
  for (const key of storage.log.getKeys({ reverse: true, limit: 1 })) {
    if (typeof key === 'number') return Math.max(floor, key);
  }
  return floor;
}

export function indexedThrough(storage: Storage): number {
  return storage.state.get(INDEXED_THROUGH) ?? -1;
}
