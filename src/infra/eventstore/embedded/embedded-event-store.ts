import { WrongExpectedRevisionError } from '../port.js';
import type {
  AllSubscription,
  AppendResult,
  EventData,
  EventStore,
  ExpectedRevision,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  StreamMetadata,
  SubscribeOptions,
} from '../port.js';
import { applyAppend, prepareEvents } from './append.js';
import { DurableHead } from './durable-head.js';
import { GroupCommit } from './group-commit.js';
import { readLog, readStreamEvents } from './reads.js';
import { deleteExpired, retentionRules } from './scavenge.js';
import { lastPosition, openStorage } from './storage.js';
import type { Storage } from './storage.js';
import { LogSubscription } from './subscription.js';

export interface EmbeddedEventStoreOptions {
  /** Directory of the LMDB environment; created if missing. */
  path: string;
  /** Store clock in epoch ms: stamps `created` and drives maxAge. Default Date.now. */
  now?: () => number;
}

/** Deletions per scavenge transaction, to keep each write transaction short. */
const SCAVENGE_CHUNK = 1000;

/**
 * The embedded event store: one LMDB environment, a global log by position, a stream index and
 * an event-id index, written with group commit. Single process per directory: positions are
 * assigned inside the write transaction, but the durable head is tracked in this process.
 */
export class EmbeddedEventStore implements EventStore {
  private readonly writes: GroupCommit;
  private readonly head: DurableHead;
  private readonly closing = new AbortController();
  private closed?: Promise<void>;

  private constructor(
    private readonly storage: Storage,
    private readonly now: () => number,
  ) {
    this.writes = new GroupCommit(storage.env);
    // Whatever is on disk at open time is as durable as it will ever be.
    this.head = new DurableHead(lastPosition(storage));
  }

  static async open(options: EmbeddedEventStoreOptions): Promise<EmbeddedEventStore> {
    return new EmbeddedEventStore(openStorage(options.path), options.now ?? Date.now);
  }

  async append(streamId: string, events: EventData[], expected: ExpectedRevision): Promise<AppendResult> {
    this.assertOpen();
    const prepared = prepareEvents(streamId, events);
    const outcome = await this.writes.submit(() => applyAppend(this.storage, streamId, prepared, expected, this.now()));
    if (!outcome.ok) throw new WrongExpectedRevisionError(streamId, expected, BigInt(outcome.actual));
    this.head.advance(outcome.position);
    return { nextRevision: BigInt(outcome.nextRevision), position: BigInt(outcome.position) };
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    this.assertOpen();
    const { maxAgeSeconds } = this.storage.meta.get(streamId) ?? {};
    return readStreamEvents(this.storage, streamId, {
      forwards: (options.direction ?? 'forwards') === 'forwards',
      fromRevision: options.fromRevision === undefined ? undefined : Number(options.fromRevision),
      maxCount: countLimit(options.maxCount),
      durableHead: this.head.value,
      expiredBefore: maxAgeSeconds === undefined ? -Infinity : this.now() - maxAgeSeconds * 1000,
    });
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    this.assertOpen();
    return readLog(this.storage, checkpoint(options.after), this.head.value, countLimit(options.maxCount));
  }

  subscribeToAll(options: SubscribeOptions = {}): AllSubscription {
    this.assertOpen();
    const source = {
      head: this.head,
      read: (after: number, upTo: number, maxCount: number) => readLog(this.storage, after, upTo, maxCount),
      closed: this.closing.signal,
    };
    return new LogSubscription(source, checkpoint(options.after));
  }

  async setStreamMetadata(streamId: string, metadata: StreamMetadata): Promise<void> {
    this.assertOpen();
    const { maxAgeSeconds } = metadata;
    if (maxAgeSeconds !== undefined && !(Number.isFinite(maxAgeSeconds) && maxAgeSeconds > 0)) {
      throw new Error('maxAgeSeconds must be a positive number');
    }
    await this.writes.submit(() => {
      if (maxAgeSeconds === undefined) this.storage.meta.removeSync(streamId);
      else this.storage.meta.putSync(streamId, { maxAgeSeconds });
    });
  }

  async getStreamMetadata(streamId: string): Promise<StreamMetadata> {
    this.assertOpen();
    const { maxAgeSeconds } = this.storage.meta.get(streamId) ?? {};
    return maxAgeSeconds === undefined ? {} : { maxAgeSeconds };
  }

  async headPosition(): Promise<bigint> {
    this.assertOpen();
    return BigInt(this.head.value);
  }

  /**
   * Physically deletes events past their stream's maxAge, so retained message contents really
   * go away. Returns how many events were deleted.
   */
  async scavenge(): Promise<number> {
    this.assertOpen();
    const expiredAt = this.now();
    let deleted = 0;
    for (const { streamId, maxAgeSeconds } of retentionRules(this.storage)) {
      const expiredBefore = expiredAt - maxAgeSeconds * 1000;
      for (;;) {
        const count = await this.writes.submit(() => deleteExpired(this.storage, streamId, expiredBefore, SCAVENGE_CHUNK));
        deleted += count;
        if (count < SCAVENGE_CHUNK) break;
      }
    }
    return deleted;
  }

  /** Ends subscriptions, waits for writes in flight, then closes the environment. */
  close(): Promise<void> {
    this.closed ??= this.shutDown();
    return this.closed;
  }

  private async shutDown(): Promise<void> {
    this.closing.abort();
    await this.writes.drain();
    await this.storage.env.close();
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('event store is closed');
  }
}

function countLimit(maxCount: number | undefined): number {
  if (maxCount === undefined) return Infinity;
  if (!Number.isInteger(maxCount) || maxCount < 0) throw new Error('maxCount must be a non-negative integer');
  return maxCount;
}

function checkpoint(after: bigint | undefined): number {
  return after === undefined ? -1 : Number(after);
}
