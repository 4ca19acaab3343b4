import type { Clock } from '../../infra/clock.js';
import type { DocClaims } from '../../infra/doc-claims.js';
import type { Logger } from '../../infra/logging/logger.js';
import type { DeliveryRepo } from '../deliveries/delivery-repo.js';
import { stubOf, type HeldDeliveries } from './held-deliveries.js';
import type { Scheduler } from './scheduler.js';

/** Longest sleep between reads of the retry queues, whatever the due times say. */
const MAX_SLEEP_MS = 5000;

/**
 * Feeds due retries from the log, one queue per receiver host (earliest due first), so a host
 * with a deep backlog takes only its own share of memory and slots. It sleeps until the earliest
 * due time it has seen, and is woken early when an outcome or a manual retry makes one due sooner.
 *
 * With several nodes, every node reads every host's queue (a retry is claimed one by one when it
 * starts, see the dispatcher), steps over retries another node holds a live claim on, and
 * re-reads the registered hosts at each poll: another node may have registered one, or died
 * holding retries of it.
 */
export class RetryLoader {
  private readonly hosts = new Set<string>();
  /** Hosts whose due retries did not all fit in memory on the last read. */
  private readonly backlogged = new Set<string>();
  /** Hosts told of a due time since their queue was last read: a read that found none may be stale. */
  private readonly told = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private running = false;
  private again = false;
  private stopped = true;

  constructor(
    private readonly repo: DeliveryRepo,
    private readonly scheduler: Scheduler,
    private readonly known: HeldDeliveries,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly ready: () => void,
    private readonly claims: DocClaims,
  ) {}

  async start(): Promise<void> {
    this.stopped = false;
    for (const host of await this.repo.retryHosts()) {
      // Shared: another node may be registering a retry of the host right now; the entry stays.
      if (this.claims.shared || !(await this.repo.forgetRetryHostIfIdle(host))) this.hosts.add(host);
    }
    await this.poll();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** A delivery of `host` becomes due at `dueMs` (an outcome, or a manual retry). */
  dueAt(host: string, dueMs: number): void {
    this.hosts.add(host);
    this.told.add(host);
    this.wakeAt(dueMs);
  }

  /** A retry of `host` finished: read more if its queue was cut short. */
  progressed(host: string): void {
    if (this.backlogged.has(host) && this.scheduler.retryRoom(host) > 0) this.wakeAt(0);
  }

  async poll(): Promise<void> {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    let nextDue = Infinity;
    try {
      do {
        this.again = false;
        nextDue = Infinity;
        if (this.claims.shared) for (const host of await this.repo.retryHosts()) this.hosts.add(host);
        for (const host of [...this.hosts]) nextDue = Math.min(nextDue, await this.pollHost(host));
      } while (this.again && !this.stopped);
    } catch (err) {
      this.logger.error({ err }, 'webhook retries could not be read; trying again shortly');
      nextDue = this.clock.now().getTime() + 1000;
    } finally {
      this.running = false;
    }
    this.ready();
    clearTimeout(this.timer);
    this.timerAt = Infinity;
    // With retries outstanding, look again now and then even when no due time is known.
    // Shared: another node may die holding retries; its lapsed claims are found at the next look.
    const safety = this.hosts.size > 0 || this.claims.shared ? this.clock.now().getTime() + MAX_SLEEP_MS : Infinity;
    this.wakeAt(Math.min(nextDue, safety));
  }

  /** Takes the host's due retries that fit; returns when its next one is due. */
  private async pollHost(host: string): Promise<number> {
    const room = this.scheduler.retryRoom(host);
    if (room <= 0) {
      this.backlogged.add(host);
      return Infinity;
    }
    const held = this.known.retries(host);
    this.told.delete(host);
    const { all, free } = await this.known.read(() => this.repo.hostRetries(host, held + room));
    // An outcome committed during the read may have made a retry the read did not see.
    if (all.length === 0 && this.known.retries(host) === 0 && !this.told.has(host)) {
      this.hosts.delete(host);
      this.backlogged.delete(host);
      return Infinity;
    }
    const now = this.clock.now().getTime();
    let taken = 0;
    for (const doc of free) {
      if (this.claims.heldElsewhere(doc)) continue;
      if (doc.due_ms > now) return doc.due_ms;
      const stub = stubOf(doc);
      this.known.hold(stub);
      this.scheduler.addRetry(stub);
      taken++;
    }
    if (taken >= room) this.backlogged.add(host);
    else this.backlogged.delete(host);
    return Infinity;
  }

  private wakeAt(dueMs: number): void {
    if (this.stopped || dueMs >= this.timerAt) return;
    clearTimeout(this.timer);
    const delay = Math.min(Math.max(0, dueMs - this.clock.now().getTime()), MAX_SLEEP_MS);
    this.timerAt = dueMs;
    this.timer = setTimeout(() => {
      this.timerAt = Infinity;
      void this.poll();
    }, delay);
    this.timer.unref();
  }
}
