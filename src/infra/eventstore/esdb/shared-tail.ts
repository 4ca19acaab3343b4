import { deepFreeze } from '../../deep-freeze.js';
import { outweighs, RECENT_EVENT_BUDGET } from '../../outweighs.js';
import { RETRY_FIRST_MS, RETRY_MAX_MS } from './subscription.js';
import type { AllSubscription, RecordedEvent } from '../port.js';

const PULL = 1000;

export interface SharedTailSource {
  /** The last of our events when the tail starts: it follows the log after it. */
  headPosition(): Promise<bigint>;
  /** A subscription to $all after a position that survives drops (EsdbSubscription). */
  subscribe(after: bigint): AllSubscription;
}

/**
 * The head of $all, received once per process and shared (issue 34). Every projection, reactor
 * and hub of a node follows the log on its own subscription; on EventStoreDB each was its own
 * gRPC stream, so every event crossed the wire, was decoded by protobuf and parsed as JSON about
 * thirty times per node, and the server sent it thirty times. The tail holds one subscription from
 * the head as it was at start and keeps the newest events, frozen, for every subscriber: a
 * subscriber at or past the tail's floor reads from memory and shares the event object (so
 * typedEvent's weak map checks it once); one behind it reads the log itself until it reaches
 * the floor. The events held are one contiguous run of positions (floor, head]: the oldest fall off
 * the bottom, and a heavy event (a history sync) is not kept: the run starts again
 * after it and subscribers read that one from the log.
 */
export class SharedTail {
  private events: RecordedEvent[] = [];
  /** Every event after this position up to `head` is held (exclusive). */
  private floorPosition = -1n;
  private headPosition = -1n;
  private started: Promise<void> | null = null;
  private source: AllSubscription | null = null;
  private stopped = false;
  private readonly waiters = new Set<() => void>();

  constructor(
    private readonly from: SharedTailSource,
    /** Events kept at least (at most twice as many) once that many have come. */
    private readonly capacity = 2_048,
  ) {}

  /** Starts following the head (once); resolves when the floor is known. Retries until it is. */
  ready(): Promise<void> {
    this.started ??= this.begin();
    return this.started;
  }

  get floor(): bigint {
    return this.floorPosition;
  }

  /** The held events after `after`, at most `max`; undefined when some of them are no longer held (the caller reads the log). */
  read(after: bigint, max: number): RecordedEvent[] | undefined {
    if (after < this.floorPosition) return undefined;
    if (after >= this.headPosition) return [];
    let low = 0;
    let high = this.events.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if ((this.events[mid] as RecordedEvent).position <= after) low = mid + 1;
      else high = mid;
    }
    return this.events.slice(low, low + max);
  }

  /** Resolves once the tail holds an event after `after`, or it stops, or `signal` aborts. */
  waitBeyond(after: bigint, signal: AbortSignal): Promise<void> {
    if (this.headPosition > after || this.stopped || signal.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        this.waiters.delete(done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      this.waiters.add(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const wake of [...this.waiters]) wake();
    await this.source?.unsubscribe();
  }

  private async begin(): Promise<void> {
    for (let wait = RETRY_FIRST_MS; !this.stopped; wait = Math.min(wait * 2, RETRY_MAX_MS)) {
      try {
        const head = await this.from.headPosition();
        if (this.stopped) return;
        const source = this.from.subscribe(head);
        this.floorPosition = this.headPosition = head;
        this.source = source;
        void this.pump(source);
        return;
      } catch {
        // The server is away: the subscribers wait, as they would on a subscription of their own.
        await new Promise((r) => setTimeout(r, wait).unref());
      }
    }
  }

  private async pump(source: AllSubscription): Promise<void> {
    try {
      for (;;) {
        const batch = await source.nextBatch(PULL);
        if (batch.length === 0 || this.stopped) return;
        this.add(batch);
        for (const wake of [...this.waiters]) wake();
      }
    } catch {
      // An event the client could not hand over: follow again after the last one held, in a while.
      await source.unsubscribe().catch(() => undefined);
      while (!this.stopped) {
        await new Promise((r) => setTimeout(r, RETRY_MAX_MS).unref());
        if (this.stopped) return;
        try {
          const again = this.from.subscribe(this.headPosition);
          this.source = again;
          void this.pump(again);
          return;
        } catch {
          // Not even started: wait and try again.
        }
      }
    }
  }

  private add(batch: RecordedEvent[]): void {
    for (const event of batch) {
      if (event.position <= this.headPosition) continue;
      this.headPosition = event.position;
      if (outweighs(event.data, RECENT_EVENT_BUDGET)) {
        this.events = [];
        this.floorPosition = event.position;
        continue;
      }
      deepFreeze(event);
      this.events.push(event);
    }
    // Dropped in chunks, not one shift per event: the run is copied once per `capacity` events.
    if (this.events.length > 2 * this.capacity) {
      const dropped = this.events.length - this.capacity;
      this.floorPosition = (this.events[dropped - 1] as RecordedEvent).position;
      this.events = this.events.slice(dropped);
    }
  }
}
