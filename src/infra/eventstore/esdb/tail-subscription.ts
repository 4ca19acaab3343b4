import type { AllSubscription, ReadAllOptions, RecordedEvent } from '../port.js';
import type { SharedTail } from './shared-tail.js';
import { RETRY_FIRST_MS, RETRY_MAX_MS } from './subscription.js';

/** Events read from the log per page while behind the tail. */
const PAGE = 500;

/**
 * A subscription to $all served by the process's shared tail (shared-tail.ts): from memory once
 * it has reached the tail's floor, and until then from pages of the log itself, so a projection
 * catching up (or rebuilding from the start) never holds the others back. The switch is by
 * position, so nothing is skipped or repeated; a read that fails (the server away) is tried again,
 * and like every subscription of the port this one ends only when unsubscribed.
 */
export class TailSubscription implements AllSubscription {
  private readonly stopped = new AbortController();
  private delivered: bigint;
  /** Read from the log while behind the tail, not handed out yet (they follow `delivered`). */
  private paged: RecordedEvent[] = [];
  private turn: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly tail: SharedTail,
    private readonly readAll: (options: ReadAllOptions) => Promise<RecordedEvent[]>,
    after: bigint,
    private readonly onStop: () => void = () => undefined,
  ) {
    this.delivered = after;
  }

  [Symbol.asyncIterator](): AsyncIterator<RecordedEvent> {
    return {
      next: async () => {
        const [value] = await this.nextBatch(1);
        return value ? { done: false, value } : { done: true, value: undefined };
      },
      return: async () => {
        await this.unsubscribe();
        return { done: true, value: undefined };
      },
    };
  }

  nextBatch(max: number): Promise<RecordedEvent[]> {
    const limit = Math.max(1, Math.floor(max));
    const result = this.turn.then(() => this.pull(limit));
    this.turn = result.catch(() => undefined);
    return result;
  }

  async unsubscribe(): Promise<void> {
    if (this.stopped.signal.aborted) return;
    this.stopped.abort();
    this.onStop();
  }

  private async pull(max: number): Promise<RecordedEvent[]> {
    const signal = this.stopped.signal;
    await this.tail.ready();
    for (let wait = RETRY_FIRST_MS; !signal.aborted; ) {
      if (this.paged.length > 0) {
        const out = this.paged.splice(0, max);
        this.delivered = (out.at(-1) as RecordedEvent).position;
        return out;
      }
      const held = this.tail.read(this.delivered, max);
      if (held === undefined) {
        // Behind what the tail holds: the log, a page at a time, until the floor is reached.
        const floor = this.tail.floor;
        let page: RecordedEvent[];
        try {
          page = await this.readAll({ after: this.delivered, maxCount: PAGE });
          wait = RETRY_FIRST_MS;
        } catch {
          await new Promise((r) => setTimeout(r, wait).unref());
          wait = Math.min(wait * 2, RETRY_MAX_MS);
          continue;
        }
        if (signal.aborted) break;
        if (page.length === 0) {
          // Nothing readable up to the floor as it was before the read (scavenged, or past its
          // $maxAge): nothing to hand out before it.
          if (floor > this.delivered) this.delivered = floor;
          else await this.tail.waitBeyond(this.delivered, signal);
          continue;
        }
        this.paged = page;
        continue;
      }
      if (held.length > 0) {
        this.delivered = (held.at(-1) as RecordedEvent).position;
        return held;
      }
      await this.tail.waitBeyond(this.delivered, signal);
    }
    return [];
  }
}
