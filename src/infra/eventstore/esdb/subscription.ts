import type { AllStreamResolvedEvent, AllStreamSubscription } from '@eventstore/db-client';
import type { AllSubscription, RecordedEvent } from '../port.js';
import { toRecorded } from './codec.js';

/** How long a batch waits for more history while the server has not said it caught up. */
const CATCH_UP_QUIET_MS = 50;

/**
 * The port's pull interface over the client's push stream. The client's subscription is a
 * Readable in object mode: reading it only when asked keeps its buffer bounded, and gRPC flow
 * control stops the server when the caller falls behind.
 */
export class EsdbSubscription implements AllSubscription {
  private stopped = false;
  private caughtUp = false;
  private failure?: Error;
  private wake?: () => void;
  /** Serialises next() and nextBatch() so each event goes to exactly one caller, in order. */
  private turn: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly source: AllStreamSubscription,
    /** Exclusive: events at or before it are dropped, whatever the server's start rule. */
    private readonly after: bigint,
    private readonly onStop: () => void = () => undefined,
  ) {
    const poke = () => this.wake?.();
    source.on('readable', poke);
    source.on('caughtUp', () => {
      this.caughtUp = true;
      poke();
    });
    source.on('fellBehind', () => (this.caughtUp = false));
    source.on('end', () => {
      this.stopped = true;
      poke();
    });
    source.on('error', (error: Error) => {
      this.failure = error;
      poke();
    });
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
    this.wake?.();
    this.onStop();
    await this.source.unsubscribe().catch(() => undefined);
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
      if (this.failure) throw this.failure;
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
    if (this.stopped || this.failure) return false;
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
      if (this.stopped) return undefined;
      const resolved = this.source.read() as AllStreamResolvedEvent | null;
      if (resolved === null) return undefined;
      const recorded = toRecorded(resolved);
      if (recorded && recorded.position > this.after) return recorded;
    }
  }
}
