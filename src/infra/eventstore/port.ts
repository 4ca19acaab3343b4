/**
 * The event store port. Every adapter (embedded LMDB, EventStoreDB) implements exactly this and
 * passes test/contract/event-store.contract.ts unchanged.
 *
 * Revisions and positions are bigint because EventStoreDB's are 64-bit unsigned; the embedded
 * adapter uses the same type so callers never care which one runs.
 */

/** What the caller expects of a stream before appending. */
export type ExpectedRevision = 'no_stream' | 'stream_exists' | 'any' | bigint;

export type JsonObject = { [key: string]: unknown };

export interface EventData {
  /** Unique id; appending the same ids again to the same stream is an idempotent no-op. */
  id: string;
  type: string;
  data: JsonObject;
  metadata: JsonObject;
}

/** A stored event as read back. Readers treat it as immutable: an adapter may share it between them. */
export interface RecordedEvent {
  id: string;
  type: string;
  streamId: string;
  /** 0-based revision of this event in its stream. */
  revision: bigint;
  /** Commit position in the global log; strictly increasing in log order. */
  position: bigint;
  data: JsonObject;
  metadata: JsonObject;
  /** When the store recorded it. */
  created: Date;
}

export interface AppendResult {
  /** Revision of the last event written (the stream's new head). */
  nextRevision: bigint;
  /** Commit position of the last event written. */
  position: bigint;
}

export interface ReadStreamOptions {
  direction?: 'forwards' | 'backwards';
  /** Inclusive start revision; default start (forwards) or end (backwards). */
  fromRevision?: bigint;
  maxCount?: number;
}

export interface ReadAllOptions {
  /** Exclusive: read events whose position is strictly greater. Default: from the start. */
  after?: bigint;
  maxCount?: number;
}

export interface SubscribeOptions {
  /** Exclusive checkpoint: deliver events whose position is strictly greater. Default: start. */
  after?: bigint;
}

/** Catch-up subscription to the global log: history from the checkpoint, then live events. */
export interface AllSubscription extends AsyncIterable<RecordedEvent> {
  /**
   * The next events in position order: waits for one, then adds those already at hand, up to
   * `max`. Resolves with none once unsubscribed. Interleaves with iteration: each event is
   * handed out once, by one or the other.
   */
  nextBatch(max: number): Promise<RecordedEvent[]>;
  /** Ends iteration; pending `next()` and `nextBatch()` calls resolve with done (no events). */
  unsubscribe(): Promise<void>;
}

export interface StreamMetadata {
  /** Events older than this many seconds are not returned by reads of the stream. */
  maxAgeSeconds?: number;
}

export interface EventStore {
  /**
   * Appends atomically. Resolves only once the events are durable.
   * Throws WrongExpectedRevisionError when `expected` does not match.
   */
  append(streamId: string, events: EventData[], expected: ExpectedRevision): Promise<AppendResult>;
  /** A missing stream reads as empty. Honours the stream's maxAge. */
  readStream(streamId: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  /** Global log in position order. */
  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]>;
  subscribeToAll(options?: SubscribeOptions): AllSubscription;
  setStreamMetadata(streamId: string, metadata: StreamMetadata): Promise<void>;
  getStreamMetadata(streamId: string): Promise<StreamMetadata>;
  /** Position of the last durable event in the log, or -1n when the log is empty. */
  headPosition(): Promise<bigint>;
  close(): Promise<void>;
}

export class WrongExpectedRevisionError extends Error {
  constructor(
    readonly streamId: string,
    readonly expected: ExpectedRevision,
    /** Current head revision, or -1n when the stream does not exist. */
    readonly actual: bigint,
  ) {
    super(`stream ${streamId}: expected ${String(expected)}, actual ${String(actual)}`);
    this.name = 'WrongExpectedRevisionError';
  }
}

/**
 * The one rule for expected revisions, shared by every adapter.
 * `current` is the head revision, -1n when the stream does not exist.
 */
export function matchesExpectedRevision(expected: ExpectedRevision, current: bigint): boolean {
  switch (expected) {
    case 'any':
      return true;
    case 'no_stream':
      return current === -1n;
    case 'stream_exists':
      return current >= 0n;
    default:
      return current === expected;
  }
}
