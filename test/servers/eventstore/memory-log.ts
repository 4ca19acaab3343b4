/**
 * The test server's storage: EventStoreDB's write and read rules over an in-memory log.
 * Nothing here knows gRPC; server.ts translates requests into these calls.
 */

/** What a writer expects of a stream; -1n is no_stream, as EventStoreDB encodes it. */
export type Expected = 'any' | 'stream_exists' | bigint;

export interface Proposed {
  id: string;
  type: string;
  contentType: string;
  data: Uint8Array;
  customMetadata: Uint8Array;
}

export interface StoredEvent extends Proposed {
  streamId: string;
  revision: bigint;
  /** Commit and prepare position are the same: every append commits at once here. */
  position: bigint;
  /** Epoch ms from the server clock. */
  created: number;
}

export type AppendOutcome =
  /** nothingWritten: an idempotent retry (the events were already there) or an empty append. */
  | { ok: true; revision: bigint; position: bigint; nothingWritten?: true }
  /** current is -1n for a missing stream. */
  | { ok: false; reason: 'wrong_expected_version'; current: bigint }
  | { ok: false; reason: 'stream_deleted' };

interface Stream {
  events: StoredEvent[];
  ids: Map<string, number>;
  tombstoned: boolean;
}

/** Bytes a record takes in the log: positions are byte offsets, as on a real server, never contiguous. */
const RECORD_OVERHEAD = 96n;

export class MemoryLog {
  readonly all: StoredEvent[] = [];
  private readonly streams = new Map<string, Stream>();
  private nextPosition = 0n;
  private readonly listeners = new Set<() => void>();

  constructor(readonly now: () => number) {}

  head(streamId: string): bigint {
    return BigInt((this.streams.get(streamId)?.events.length ?? 0) - 1);
  }

  /**
   * EventStoreDB's idempotence: a retry is recognised when the events at the revisions it would
   * have taken (exact revision) or where its first event id sits (any) carry the same ids in
   * order; a partial match is a conflict, never a half write.
   */
  append(streamId: string, proposed: Proposed[], expected: Expected): AppendOutcome {
    const stream = this.streamFor(streamId);
    if (stream.tombstoned) return { ok: false, reason: 'stream_deleted' };
    const current = BigInt(stream.events.length - 1);
    const startAt = this.retryStart(stream, proposed, expected, current);
    if (startAt !== undefined) {
      const matched = proposed.every((event, i) => stream.events[startAt + i]?.id === event.id);
      if (matched && proposed.length > 0) {
        const last = stream.events[startAt + proposed.length - 1] as StoredEvent;
        return { ok: true, revision: last.revision, position: last.position, nothingWritten: true };
      }
      if (startAt <= Number(current)) return { ok: false, reason: 'wrong_expected_version', current };
    }
    if (!matches(expected, current)) return { ok: false, reason: 'wrong_expected_version', current };
    if (proposed.length === 0) return { ok: true, revision: current, position: -1n, nothingWritten: true };
    const created = this.now();
    for (const event of proposed) {
      const stored: StoredEvent = { ...event, streamId, revision: BigInt(stream.events.length), position: this.nextPosition, created };
      this.nextPosition += RECORD_OVERHEAD + BigInt(event.data.length + event.customMetadata.length);
      stream.ids.set(event.id, stream.events.length);
      stream.events.push(stored);
      this.all.push(stored);
    }
    const last = stream.events.at(-1) as StoredEvent;
    for (const listener of this.listeners) listener();
    return { ok: true, revision: last.revision, position: last.position };
  }

  /** Where a retry of `proposed` would have started, or undefined when it cannot be one. */
  private retryStart(stream: Stream, proposed: Proposed[], expected: Expected, current: bigint): number | undefined {
    const first = proposed[0];
    if (!first) return undefined;
    if (expected === 'any' || expected === 'stream_exists') return stream.ids.get(first.id);
    const startAt = Number(expected) + 1;
    if (startAt > Number(current) || stream.events[startAt]?.id !== first.id) return undefined;
    return startAt;
  }

  /** Visible events of a stream after $tb, $maxCount and $maxAge; undefined when it does not exist. */
  visible(streamId: string): StoredEvent[] | 'deleted' | undefined {
    const stream = this.streams.get(streamId);
    if (stream?.tombstoned) return 'deleted';
    if (!stream || stream.events.length === 0) return undefined;
    const rules = this.metadataOf(streamId);
    let events = stream.events;
    if (rules.truncateBefore !== undefined) {
      events = events.slice(Math.min(rules.truncateBefore, events.length));
      if (events.length === 0 && rules.truncateBefore >= stream.events.length) return undefined;
    }
    if (rules.maxCount !== undefined) events = events.slice(Math.max(0, events.length - rules.maxCount));
    if (rules.maxAgeSeconds !== undefined) {
      const oldest = this.now() - rules.maxAgeSeconds * 1000;
      events = events.filter((event) => event.created >= oldest);
    }
    return events;
  }

  /** Soft delete, as EventStoreDB does it: metadata truncating before the next revision. */
  softDelete(streamId: string): AppendOutcome {
    const current = this.head(streamId);
    if (current < 0n) return { ok: false, reason: 'wrong_expected_version', current };
    const previous = this.rawMetadata(streamId);
    const data = Buffer.from(JSON.stringify({ ...previous, $tb: Number(current) + 1 }));
    return this.append(`$$${streamId}`, [systemEvent('$metadata', data)], 'any');
  }

  tombstone(streamId: string): AppendOutcome {
    const stream = this.streamFor(streamId);
    if (stream.tombstoned) return { ok: false, reason: 'stream_deleted' };
    stream.tombstoned = true;
    return this.append('$streamDeleted', [systemEvent('$streamDeleted', Buffer.from(JSON.stringify({ streamId })))], 'any');
  }

  /** Calls `listener` after every append until the returned function is called. */
  onAppend(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Index of the first event of `all` whose position is >= `position`. */
  indexAtOrAfter(position: bigint): number {
    let low = 0;
    let high = this.all.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if ((this.all[mid] as StoredEvent).position < position) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  private metadataOf(streamId: string): { truncateBefore?: number; maxCount?: number; maxAgeSeconds?: number } {
    if (streamId.startsWith('$$')) return {};
    const raw = this.rawMetadata(streamId);
    return {
      truncateBefore: positiveNumber(raw.$tb),
      maxCount: positiveNumber(raw.$maxCount),
      maxAgeSeconds: positiveNumber(raw.$maxAge),
    };
  }

  private rawMetadata(streamId: string): Record<string, unknown> {
    const last = this.streams.get(`$$${streamId}`)?.events.at(-1);
    if (!last) return {};
    try {
      const parsed: unknown = JSON.parse(Buffer.from(last.data).toString('utf8'));
      return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
    } catch {
      return {};
    }
  }

  private streamFor(streamId: string): Stream {
    let stream = this.streams.get(streamId);
    if (!stream) {
      stream = { events: [], ids: new Map(), tombstoned: false };
      this.streams.set(streamId, stream);
    }
    return stream;
  }
}

function matches(expected: Expected, current: bigint): boolean {
  if (expected === 'any') return true;
  if (expected === 'stream_exists') return current >= 0n;
  return expected === current;
}

function positiveNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

function systemEvent(type: string, data: Uint8Array): Proposed {
  return { id: crypto.randomUUID(), type, contentType: 'application/json', data, customMetadata: new Uint8Array() };
}
