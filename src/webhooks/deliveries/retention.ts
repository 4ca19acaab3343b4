import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Clock } from '../../infra/clock.js';
import type { Logger } from '../../infra/logging/logger.js';
import { repeat } from '../../infra/repeat.js';
import type { DeliveryRepo } from './delivery-repo.js';
import { FINAL_STATES, type DeliveryDoc, type DeliveryState, type FinalState } from './documents.js';

const DAY_MS = 86_400_000;

export interface RetentionOptions {
  repo: DeliveryRepo;
  clock: Clock;
  logger: Logger;
  /** SESSION_RETENTION_DAYS: a body lives no longer than the session event it was made from. */
  retentionDays: number;
  /** Between sweeps. */
  intervalMs: number;
  /** Most deliveries read or removed in one store call, so a sweep never holds the store for long. */
  batch: number;
  /**
   * Several nodes: whether this node is the one that sweeps now (asked before each sweep). Two
   * sweeps at once would be safe (a removal is conditional on the delivery being final) but
   * every node would read every instance's log for nothing.
   */
  leader?: () => Promise<boolean>;
}

export interface SweepResult {
  removed: number;
}

/**
 * Removes final deliveries (delivered, or failed for good) whose event is older than the session
 * retention: their bodies carry message contents, which must not outlive the session streams
 * they came from. The whole record goes, not only its body: the log and a retry by hand then
 * answer as for a delivery that never existed (absent, 404) instead of offering one that could
 * no longer be sent. Queued and retrying deliveries are never touched, whatever their age.
 */
export class RetentionSweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<SweepResult> | null = null;
  private halted = false;

  constructor(private readonly options: RetentionOptions) {}

  start(): void {
    if (this.timer) return;
    this.halted = false;
    this.timer = repeat(
      this.options.intervalMs,
      () => this.sweep(),
      (err) => this.options.logger.error({ err }, 'webhook delivery retention sweep failed; the next one tries again'),
    );
  }

  /** No new sweep starts; one under way stops after its current batch. */
  async stop(): Promise<void> {
    this.halted = true;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
  }

  /** One sweep now; a call during a sweep shares it. */
  sweep(): Promise<SweepResult> {
    this.running ??= this.pass().finally(() => (this.running = null));
    return this.running;
  }

  private async pass(): Promise<SweepResult> {
    if (this.halted) return { removed: 0 };
    if (this.options.leader && !(await this.options.leader())) return { removed: 0 };
    const cutoffMs = this.options.clock.now().getTime() - this.options.retentionDays * DAY_MS;
    let removed = 0;
    // Every instance ever created has a hook doc, deleted ones included, so none is missed.
    for (const instanceId of await this.options.repo.instancesWithHooks()) {
      if (this.halted) return { removed };
      removed += await this.sweepInstance(instanceId, cutoffMs);
      // Store calls resolve without a macrotask: let requests and attempts in between instances.
      await nextTurn();
    }
    if (removed > 0) this.options.logger.info({ removed, retentionDays: this.options.retentionDays }, 'expired webhook deliveries removed');
    return { removed };
  }

  /**
   * Oldest first along the log, up to the first delivery still within retention; final ones in
   * that run are removed, pending ones stepped over. The first read takes one delivery, because
   * most instances have nothing to remove; only a hit reads whole batches.
   */
  private async sweepInstance(instanceId: string, cutoffMs: number): Promise<number> {
    let removed = 0;
    let afterSeq = 0;
    for (let limit = 1; !this.halted; limit = this.options.batch) {
      const expired = leadingExpired(await this.options.repo.oldest(instanceId, limit, afterSeq), cutoffMs);
      const final = expired.filter((d) => isFinal(d.state));
      if (final.length > 0) removed += await this.options.repo.removeIfFinal(instanceId, final);
      if (expired.length < limit) break;
      afterSeq = (expired[expired.length - 1] as DeliveryDoc).seq;
      await nextTurn();
    }
    return removed;
  }
}

const isFinal = (state: DeliveryState): state is FinalState => (FINAL_STATES as readonly DeliveryState[]).includes(state);

/**
 * The run of deliveries before the first one within retention. Seq order is event order, so the
 * run is normally all the expired ones; if event times ever step back, stopping early only leaves
 * a delivery for a later sweep, and nothing recent is removed. An unreadable time counts as recent.
 */
function leadingExpired(oldestFirst: DeliveryDoc[], cutoffMs: number): DeliveryDoc[] {
  const end = oldestFirst.findIndex((d) => !(Date.parse(d.created_at) < cutoffMs));
  return end === -1 ? oldestFirst : oldestFirst.slice(0, end);
}
