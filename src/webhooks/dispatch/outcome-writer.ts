import type { DocumentStore, WriteOp } from '../../infra/docstore/port.js';
import type { Logger } from '../../infra/logging/logger.js';
import type { LaneWork } from '../../infra/metrics/work-meter.js';

const MAX_BATCH = 1000;
const RETRY_MS = 200;
const MAX_TRIES = 5;

interface Entry {
  ops: WriteOp[];
  done: (committed: boolean) => void;
}

/**
 * Writes attempt outcomes in batches: whatever finished while the previous batch was committing
 * goes in the next one, so a burst of deliveries costs a handful of transactions. A write that
 * keeps failing is given up after a few tries and its callers are told: the delivery then stays
 * in its previous state in the log, and the dispatcher attempts it again, which is a duplicate,
 * never a loss.
 */
export class OutcomeWriter {
  private queue: Entry[] = [];
  private running: Promise<void> | null = null;

  constructor(
    private readonly docs: DocumentStore,
    private readonly logger: Logger,
    /** Where its batches and the store's work for them are counted (/metrics). */
    private readonly work?: LaneWork,
  ) {}

  /** `done` runs once the ops are committed (true) or given up (false). */
  write(ops: WriteOp[], done: (committed: boolean) => void): void {
    this.queue.push({ ops, done });
    this.running ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.run());
  }

  /** Resolves when everything written so far is committed. */
  async drain(): Promise<void> {
    while (this.running) await this.running;
  }

  private async run(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.take());
        if (this.work) {
          this.work.batches++;
          this.work.events += batch.length;
        }
        const committed = await this.commit(batch.flatMap((e) => e.ops));
        for (const entry of batch) entry.done(committed);
      }
    } finally {
      this.running = null;
    }
  }

  private take(): number {
    let ops = 0;
    let entries = 0;
    for (const entry of this.queue) {
      if (entries > 0 && ops + entry.ops.length > MAX_BATCH) break;
      ops += entry.ops.length;
      entries++;
    }
    return entries;
  }

  private async commit(ops: WriteOp[]): Promise<boolean> {
    for (let tries = 1; ; tries++) {
      try {
        if (this.work) {
          this.work.writes++;
          this.work.ops += ops.length;
        }
        await this.docs.batch(ops, this.work ? { meter: this.work } : {});
        return true;
      } catch (err) {
        if (tries >= MAX_TRIES) {
          this.logger.error({ err, ops: ops.length }, 'webhook outcomes not recorded; those deliveries will be attempted again');
          return false;
        }
        await new Promise((r) => setTimeout(r, RETRY_MS));
      }
    }
  }
}
