import type { AllStreamResolvedEvent, AllStreamSubscription } from '@eventstore/db-client';
import type { AllSubscription, RecordedEvent } from '../port.js';
import { toRecorded } from './codec.js';

/** How long a batch waits for more history while the server has not said it caught up. */
const CATCH_UP_QUIET_MS = 50;
/** Waits between attempts to resubscribe after the connection dropped: doubling, capped. */
export const RETRY_FIRST_MS = 100;
export const RETRY_MAX_MS = 5_000;

/** Opens the client's subscription to $all after an exclusive commit position (-1n: from the start). */
export type OpenSubscription = (after: bigint) => AllStreamSubscription;

/**
 * The port's pull interface over the client's push stream. The client's subscription is a
 * Readable in object mode: reading it only when asked keeps its buffer bounded, and gRPC flow
 * control stops the server when the caller falls behind.
 *
 * A subscription of the port ends only when unsubscribed, as the embedded store's do; its
 * consumers (projections, reactors) have no way to ask for it again. So when the connection
 * drops, this one subscribes again after the last event it handed out: nothing is skipped and
 * nothing repeated, and callers simply wait, as they would for new events.
 */
export class EsdbSubscription implements AllSubscription {
  private source: AllStreamSubscription;
  private stopped = false;
  private caughtUp = false;
  /** Position of the last event handed out: where a new subscription starts after a drop. */
  private delivered: bigint;
  private retryMs = RETRY_FIRST_MS;
  private retryTimer?: NodeJS.Timeout;
  private wake?: () => void;
  /** Serialises next() and nextBatch() so each event goes to exactly one caller, in order. */
  private turn: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly open: OpenSubscription,
    after: bigint,
    private readonly onStop: () => void = () => undefined,
  ) {
    this.delivered = after;
    this.source = this.attach();
  }

  [Symbol.asyncIterator](): AsyncIterator<RecordedEvent> {
    return {
      next: () => this.inTurn(() => this.pull()),
      return: async () => {
        await this.unsubscribe();
        return { done: true, value: undefined };
      },
    };
  }

  nextBatch(max: number): Promise<RecordedEvent[]> {
    const limit = Math.max(1, Math.floor(max));
    return this.inTurn(async () => {
      const first = await this.pull();
      if (first.done) return [];
      const batch = [first.value];
      while (batch.length < limit) {
        const next = this.take();
        if (next) batch.push(next);
        else if (!(await this.moreAtHand())) break;
      }
      return batch;
    });
  }

  async unsubscribe(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.wake?.();
    this.onStop();
    await this.source.unsubscribe().catch(() => undefined);
  }

  /** Subscribes after `delivered` and listens to the new source. */
  private attach(): AllStreamSubscription {
    const source = this.open(this.delivered);
    this.caughtUp = false;
    const current = () => source === this.source && !this.stopped;
    const poke = () => {
      if (current()) this.wake?.();
    };
    source.on('readable', poke);
    source.on('caughtUp', () => {
      if (current()) this.caughtUp = true;
      poke();
    });
    source.on('fellBehind', () => {
      if (current()) this.caughtUp = false;
    });
    // Only our own unsubscribe ends a subscription: the server closing it is a drop like any other.
    source.on('end', () => this.dropped(source));
    source.on('error', () => this.dropped(source));
    return source;
  }

  private dropped(source: AllStreamSubscription): void {
    if (source !== this.source || this.stopped || this.retryTimer) return;
    void source.unsubscribe().catch(() => undefined);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (this.stopped) return;
      this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
      try {
        this.source = this.attach();
      } catch {
        // The client refused even to start one: the same wait, then again.
        this.dropped(source);
      }
    }, this.retryMs);
    this.retryTimer.unref();
  }

  private inTurn<T>(work: () => Promise<T>): Promise<T> {
    const result = this.turn.then(work);
    this.turn = result.catch(() => undefined);
    return result;
  }

  private async pull(): Promise<IteratorResult<RecordedEvent>> {
    for (;;) {
      if (this.stopped) return { done: true, value: undefined };
      const event = this.take();
      if (event) return { done: false, value: event };
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }

  /**
   * Whether more events are at hand. Until the server says the subscription caught up, the
   * history it is still sending is: wait for the next event (at most CATCH_UP_QUIET_MS, for
   * servers before 23.10 that never say so). Once live, only what already reached the process
   * counts, which one turn of the event loop lets through the client's stream pipeline.
   */
  private async moreAtHand(): Promise<boolean> {
    if (this.stopped || this.retryTimer) return false;
    const catchingUp = !this.caughtUp;
    const arrived = await new Promise<boolean>((resolve) => {
      const quiet = catchingUp ? setTimeout(() => resolve(false), CATCH_UP_QUIET_MS) : setImmediate(() => resolve(false));
      this.wake = () => {
        if (catchingUp) clearTimeout(quiet as NodeJS.Timeout);
        else clearImmediate(quiet as NodeJS.Immediate);
        resolve(true);
      };
    });
    this.wake = undefined;
    return arrived;
  }

  /** The next of our events already received, skipping anything else; undefined when none is at hand. */
  private take(): RecordedEvent | undefined {
    for (;;) {
      if (this.stopped || this.retryTimer) return undefined;
      const resolved = this.source.read() as AllStreamResolvedEvent | null;
      if (resolved === null) return undefined;
      const recorded = toRecorded(resolved);
      if (recorded && recorded.position > this.delivered) {
        this.delivered = recorded.position;
        this.retryMs = RETRY_FIRST_MS;
        return recorded;
      }
    }
  }
}
