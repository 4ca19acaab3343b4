import type { DocumentStore } from '../infra/docstore/port.js';
import type { Clock } from '../infra/clock.js';
import type { Logger } from '../infra/logging/logger.js';
import { BILLING_DUE, type BillingDueDoc } from './due-times.js';

export interface BillingTimerOptions {
  /** The longest it sleeps without looking, so a clock that jumps is noticed. */
  maxSleepMs: number;
  batch: number;
}

const DEFAULTS: BillingTimerOptions = { maxSleepMs: 1_000, batch: 100 };

/**
 * Acts on due times: it reads the due-time read model and asks for each due instance's
 * transition through the decider. The decider decides what is due, so acting twice, late, or on
 * two nodes at once records it once (one append wins the expected revision; the others find
 * nothing due). It keeps no state of its own: a restart finds every pending time in the log.
 */
export class BillingTimer {
  private stopped = false;
  private wake: (() => void) | null = null;
  /** A poke that came while it was looking: the next sleep is skipped. */
  private poked = false;
  private running: Promise<void> | null = null;
  private readonly options: BillingTimerOptions;

  constructor(
    private readonly docs: DocumentStore,
    private readonly act: (instanceId: string) => Promise<void>,
    private readonly clock: Clock,
    private readonly logger: Logger,
    options: Partial<BillingTimerOptions> = {},
  ) {
    this.options = { ...DEFAULTS, ...options };
  }

  start(): void {
    this.running = this.loop();
  }

  /** Due times changed: look again now. */
  poke(): void {
    if (this.wake) this.wake();
    else this.poked = true;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.poke();
    await this.running;
  }

  private async loop(): Promise<void> {
    const due = this.docs.collection<BillingDueDoc>(BILLING_DUE);
    while (!this.stopped) {
      this.poked = false;
      let sleepMs = this.options.maxSleepMs;
      try {
        const now = this.clock.now();
        const ready = await due.find({ due_at: { $lte: now.toISOString() } }, { sort: { due_at: 1 }, limit: this.options.batch });
        for (const doc of ready) {
          if (this.stopped) return;
          await this.act(doc._id).catch((err: unknown) => this.logger.warn({ err, instanceId: doc._id }, 'a billing transition failed; retried at the next look'));
        }
        if (ready.length === 0) {
          const [next] = await due.find({ due_at: { $exists: true } }, { sort: { due_at: 1 }, limit: 1 });
          if (next?.due_at) sleepMs = Math.min(sleepMs, Math.max(0, Date.parse(next.due_at) - now.getTime()));
        }
        // After acting, the read model moves on its own commit, which pokes; until then wait.
      } catch (err) {
        this.logger.warn({ err }, 'billing timer could not read due times');
      }
      if (this.stopped) return;
      if (this.poked) {
        this.poked = false;
        continue;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, sleepMs);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
    }
  }
}
