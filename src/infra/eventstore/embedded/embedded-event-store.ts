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
import type { AppendContext } from './append.js';
import { DurableHead } from './durable-head.js';
import { GroupCommit } from './group-commit.js';
import { readLog, readStreamEvents } from './reads.js';
import { RecentLog } from './recent-log.js';
import { RecentIds } from './recent-ids.js';
import { deleteExpired, retentionRules } from './scavenge.js';
import { LAST_POSITION, indexedThrough, lastPosition, openStorage } from './storage.js';
import type { Storage } from './storage.js';
import { recover, writeIndex } from './stream-index.js';
import { LogSubscription } from './subscription.js';
import { UnindexedEvents } from './unindexed.js';

export interface EmbeddedEventStoreOptions {
  /** Directory of the LMDB environment; created if missing. */
  path: string;
  /** Store clock in epoch ms: stamps `created` and drives maxAge. Default Date.now. */
  now?: () => number;
  /**
   * Unindexed events that start indexing at once (default 2000). Smaller means a shorter replay
   * after a crash and more index writes; tests set 1 to exercise the on-disk index constantly.
   */
  indexBatch?: number;
}

/** Deletions per scavenge transaction, to keep each write transaction short. */
const SCAVENGE_CHUNK = 1000;
/** Unindexed events that trigger indexing at once; about 100 ms of appends at full speed. */
const DEFAULT_INDEX_BATCH = 2000;
/** Below indexBatch, unindexed events wait at most this long, so a restart replays little. */
const INDEX_DELAY_MS = 200;
/** Event ids remembered for retries with `any` (see RecentIds), and how many are read back at open. */
const RECENT_IDS = 100_000;
const RECENT_IDS_AT_OPEN = 10_000;
/** Newest log entries kept decoded for subscribers at the head (a few batches of the runner). */
const RECENT_LOG = 2_048;

/**
 * The embedded event store: one LMDB environment, a global log by position and a stream index.
 * Appends are checked and placed in memory, in call order, and their log entries queued with
 * lmdb's asynchronous puts, which it commits many to a transaction; each is acknowledged once its
 * commit is flushed (see GroupCommit). Appends write the log only; the stream index follows in
 * bulk a little later (see storage.ts for why), and until then lives in memory.
 *
 * Single process per directory: expected revisions are checked and positions assigned against
 * what this process holds in memory (every append it made, committed or not), and the durable
 * head and the unindexed stream entries are tracked here too.
 */
export class EmbeddedEventStore implements EventStore {
  private readonly writes: GroupCommit;
  private readonly head: DurableHead;
  private readonly context: AppendContext;
  private readonly closing = new AbortController();
  private closed?: Promise<void>;
  private indexing?: Promise<void>;
  private indexTimer?: NodeJS.Timeout;
  /** INDEXED_THROUGH as last written. */
  private indexedThrough: number;

  private constructor(
    private readonly storage: Storage,
    private readonly now: () => number,
    private readonly indexBatch: number,
  ) {
    this.writes = new GroupCommit(storage.env);
    this.context = {
      storage,
      unindexed: new UnindexedEvents(),
      recent: new RecentIds(RECENT_IDS),
      tail: new RecentLog(RECENT_LOG),
      last: lastPosition(storage),
      pending: new Map(),
      writes: this.writes,
    };
    recover(this.context, this.context.recent, RECENT_IDS_AT_OPEN);
    this.indexedThrough = indexedThrough(storage);
    // Whatever is on disk at open time is as durable as it will ever be.
    this.head = new DurableHead(this.context.last);
  }

  static async open(options: EmbeddedEventStoreOptions): Promise<EmbeddedEventStore> {
    const indexBatch = options.indexBatch ?? DEFAULT_INDEX_BATCH;
    if (!Number.isInteger(indexBatch) || indexBatch < 1) throw new Error('indexBatch must be a positive integer');
    return new EmbeddedEventStore(openStorage(options.path), options.now ?? Date.now, indexBatch);
  }

  async append(streamId: string, events: EventData[], expected: ExpectedRevision): Promise<AppendResult> {
    this.assertOpen();
    const prepared = prepareEvents(streamId, events);
    this.writes.assertWritable();
    const outcome = applyAppend(this.context, streamId, prepared, expected, this.now());
    // Every outcome waits for the disk, a retry's and a rejection's too: what they answer from may
    // be an earlier append's, queued but not yet durable.
    await this.writes.durable();
    if (!outcome.ok) throw new WrongExpectedRevisionError(streamId, expected, BigInt(outcome.actual));
    for (let at = outcome.position - prepared.length + 1; at <= outcome.position; at++) this.context.pending.delete(at);
    this.head.advance(outcome.position);
    this.scheduleIndexing();
    return { nextRevision: BigInt(outcome.nextRevision), position: BigInt(outcome.position) };
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    this.assertOpen();
    const { maxAgeSeconds } = this.storage.meta.get(streamId) ?? {};
    return readStreamEvents(this.storage, this.context.unindexed.entries(streamId), streamId, {
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
      read: (after: number, upTo: number, maxCount: number) =>
        this.context.tail.read(after, upTo, maxCount) ?? readLog(this.storage, after, upTo, maxCount),
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
    await this.indexAll();
    let deleted = 0;
    for (const { streamId, maxAgeSeconds } of retentionRules(this.storage)) {
      const expiredBefore = expiredAt - maxAgeSeconds * 1000;
      for (;;) {
        const count = await this.writes.submit(() => {
          // It may delete the log's last entries: the position they had must stay taken. (Appends
          // queued after this callback may be counted in and skipped after a crash: never reused.)
          this.storage.state.putSync(LAST_POSITION, this.context.last);
          // Deleted entries must not be served from memory either.
          this.context.tail.clear();
          return deleteExpired(this.storage, streamId, expiredBefore, SCAVENGE_CHUNK);
        });
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
    clearTimeout(this.indexTimer);
    // Indexing now only shortens the next open's replay; a failure here loses nothing.
    await this.indexAll().catch(() => undefined);
    await this.writes.drain();
    await this.storage.env.close();
  }

  private scheduleIndexing(): void {
    if (this.indexing || this.closed || this.head.value <= this.indexedThrough) return;
    if (this.context.unindexed.size >= this.indexBatch) {
      void this.index().catch(() => undefined); // a failed commit already fails every later write
    } else if (this.indexTimer === undefined && this.context.unindexed.size > 0) {
      this.indexTimer = setTimeout(() => {
        this.indexTimer = undefined;
        void this.index().catch(() => undefined);
      }, INDEX_DELAY_MS).unref();
    }
  }

  /** Writes the unindexed entries to the index; forgets them once readers can see them there. */
  private index(): Promise<void> {
    this.indexing ??= (async () => {
      try {
        // Acknowledged positions only: their log entries are on disk, so INDEXED_THROUGH never
        // vouches for an entry whose commit is still pending (and might fail).
        const through = this.head.value;
        if (through > this.indexedThrough) {
          await writeIndex(this.context, through);
          this.context.unindexed.dropThrough(through);
          this.indexedThrough = through;
        }
      } finally {
        this.indexing = undefined;
        this.scheduleIndexing();
      }
    })();
    return this.indexing;
  }

  /** Indexes everything acknowledged before the call. */
  private async indexAll(): Promise<void> {
    // One already running may have started before the latest appends: let it finish, then go again.
    await this.indexing?.catch(() => undefined);
    await this.index();
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
