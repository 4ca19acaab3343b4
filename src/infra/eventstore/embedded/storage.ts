import { open } from 'lmdb';
import type { Database, RootDatabase } from 'lmdb';
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

/** Where an event id lives, so idempotent retries can answer without scanning. */
export interface IdEntry {
  streamId: string;
  revision: number;
  position: number;
}

export interface StoredMetadata {
  maxAgeSeconds?: number;
}

/**
 * One LMDB environment with a named database per index, so an append touches all of them in one
 * ACID transaction. Numbers inside (positions < 2^53); bigint only at the port.
 */
export interface Storage {
  env: RootDatabase;
  /** position → event. */
  log: Database<StoredEvent, number>;
  /** [streamId, revision] → position. */
  streams: Database<number, [string, number]>;
  /** streamId → head revision; survives scavenging of all the stream's events. */
  heads: Database<number, string>;
  ids: Database<IdEntry, string>;
  meta: Database<StoredMetadata, string>;
  /** Singletons, see LAST_POSITION. */
  state: Database<number, string>;
}

/**
 * The last position ever assigned. Kept apart from the log because scavenging may delete the
 * log's tail, and positions must never be reused.
 */
export const LAST_POSITION = 'lastPosition';

export function openStorage(path: string): Storage {
  const env = open({ path, maxDbs: 8 });
  return {
    env,
    log: env.openDB<StoredEvent, number>({ name: 'log' }),
    streams: env.openDB<number, [string, number]>({ name: 'streams' }),
    heads: env.openDB<number, string>({ name: 'heads' }),
    ids: env.openDB<IdEntry, string>({ name: 'ids' }),
    meta: env.openDB<StoredMetadata, string>({ name: 'meta' }),
    state: env.openDB<number, string>({ name: 'state' }),
  };
}

export function lastPosition(storage: Storage): number {
  return storage.state.get(LAST_POSITION) ?? -1;
}
