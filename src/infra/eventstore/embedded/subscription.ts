import type { AllSubscription, RecordedEvent } from '../port.js';
import type { DurableHead } from './durable-head.js';

export interface LogSource {
  head: DurableHead;
  /** Log entries with after < position <= upTo, at most maxCount, in position order. */
  read(after: number, upTo: number, maxCount: number): RecordedEvent[];
  /** Aborts when the store closes. */
  closed: AbortSignal;
}

const PAGE_SIZE = 512;

/**
 * Catch-up and live are the same loop: read the log past a cursor up to the durable head, then
 * wait for the head to move. Live events therefore come from the log itself, in position order,
 * and the switch from catch-up to live can neither skip nor repeat an event.
 */
export class LogSubscription implements AllSubscription {
  private readonly stopped = new AbortController();
  private readonly signal: AbortSignal;
  private buffer: RecordedEvent[] = [];
  /** Every position up to here has been read into the buffer (or was scavenged). */
  private cursor: number;
  /** Serialises next() and nextBatch() calls so concurrent callers never read the same page twice. */
  private turn: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly source: LogSource,
    after: number,
  ) {
    this.cursor = after;
    this.signal = AbortSignal.any([this.stopped.signal, source.closed]);
  }

  [Symbol.asyncIterator](): AsyncIterator<RecordedEvent> {
    return {
      next: () => this.next(),
      return: async () => {
        await this.unsubscribe();
        return { done: true, value: undefined };
      },
    };
  }

  async unsubscribe(): Promise<void> {
    this.stopped.abort();
  }

  nextBatch(max: number): Promise<RecordedEvent[]> {
    return this.inTurn(() => this.pullBatch(Math.max(1, Math.floor(max))));
  }

  private next(): Promise<IteratorResult<RecordedEvent>> {
    return this.inTurn(() => this.pull());
  }

  /** Runs after every earlier next() and nextBatch() has settled (see `turn`). */
  private inTurn<T>(read: () => Promise<T>): Promise<T> {
    const result = this.turn.then(read);
    this.turn = result.catch(() => undefined);
    return result;
  }

  private async pull(): Promise<IteratorResult<RecordedEvent>> {
    for (;;) {
      if (this.signal.aborted) return { done: true, value: undefined };
      const event = this.buffer.shift();
      if (event) return { done: false, value: event };
      if (!this.fill()) await this.source.head.waitBeyond(this.cursor, this.signal);
    }
  }

  private async pullBatch(max: number): Promise<RecordedEvent[]> {
    const first = await this.pull();
    if (first.done) return [];
    const batch = [first.value];
    while (batch.length < max && !this.signal.aborted && (this.buffer.length > 0 || this.fillOrStop())) {
      const n = Math.min(this.buffer.length, max - batch.length);
      for (let i = 0; i < n; i++) batch.push(this.buffer[i] as RecordedEvent);
      this.buffer = this.buffer.slice(n);
    }
    return batch;
  }

  /**
   * As fill, but a failed read ends the batch instead of dropping the events already taken into
   * it; the next call meets the failure again, with nothing lost.
   */
  private fillOrStop(): boolean {
    try {
      return this.fill();
    } catch {
      return false;
    }
  }

  /** Reads the next page of the log up to the durable head into the buffer; false when none. */
  private fill(): boolean {
    const upTo = this.source.head.value;
    const page = this.source.read(this.cursor, upTo, PAGE_SIZE);
    const last = page.at(-1);
    this.cursor = page.length === PAGE_SIZE && last ? Number(last.position) : Math.max(this.cursor, upTo);
    this.buffer = page;
    return page.length > 0;
  }
}
