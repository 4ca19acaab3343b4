import type { Leases } from './leases.js';

export interface HeldLeaseOptions {
  leases: Leases;
  name: string;
  ttlMs: number;
  /** How long before the stored lease could lapse the holder stops (default a third of the ttl). */
  marginMs?: number;
  /** How often the lease is renewed (default a quarter of the ttl). */
  renewEveryMs?: number;
  /** Monotonic milliseconds for this node's own deadline: a wall clock step must not keep a lost lease. */
  monotonicMs?: () => number;
  /**
   * Called once when the lease is lost (another node took it, or no renewal landed in time), before
   * the lease is released in the store: the holder stops what the lease guards here.
   */
  lost(why: string): void | Promise<void>;
  /** A renewal the store did not answer (the watchdog still stops on time). */
  renewalFailed?(err: unknown): void;
}

/**
 * One lease this node holds, and the three duties that come with it, in one place for every
 * mechanism that holds leases (the projections writer, session ownership, webhook and export lanes):
 * renew it every `renewEveryMs`; stop (call `lost`) `marginMs` before it could lapse when no renewal
 * landed, counted from before the write that extended it, so the stored expiry is later than the stop
 * whatever the round trips; stop at once when a renewal finds another node holds it. `signal` aborts
 * then, or on release, so work under the lease can listen to it.
 */
export class HeldLease {
  private readonly abort = new AbortController();
  private stopBy: number;
  private renewer: NodeJS.Timeout | undefined;
  private watchdog: NodeJS.Timeout | undefined;
  private renewing: Promise<boolean | null> | null = null;
  private readonly mono: () => number;

  private constructor(
    private readonly o: HeldLeaseOptions,
    readonly token: number,
    started: number,
  ) {
    this.mono = o.monotonicMs ?? (() => performance.now());
    this.stopBy = 0;
    this.extend(started);
    const every = o.renewEveryMs ?? Math.max(20, Math.floor(o.ttlMs / 4));
    this.renewer = setInterval(() => void this.renew(), every);
    this.renewer.unref();
  }

  /** Takes the lease (or renews it when this node holds it already); null when another node holds it. */
  static async acquire(o: HeldLeaseOptions): Promise<HeldLease | null> {
    const started = (o.monotonicMs ?? (() => performance.now()))();
    const token = await o.leases.acquire(o.name, o.ttlMs);
    return token === null ? null : new HeldLease(o, token, started);
  }

  get name(): string {
    return this.o.name;
  }

  /** Aborted once the lease is lost or released. */
  get signal(): AbortSignal {
    return this.abort.signal;
  }

  /** True while work under the lease may go on: not lost, not released, and renewed in time. */
  get valid(): boolean {
    return !this.abort.signal.aborted && this.mono() < this.stopBy;
  }

  private get marginMs(): number {
    return this.o.marginMs ?? this.o.ttlMs / 3;
  }

  /** Renews now: true renewed, false lost (and `lost` was called), null when the store did not answer. */
  renew(): Promise<boolean | null> {
    if (this.abort.signal.aborted) return Promise.resolve(false);
    this.renewing ??= (async () => {
      const started = this.mono();
      try {
        const renewed = await this.o.leases.renew(this.o.name, this.token, this.o.ttlMs);
        if (this.abort.signal.aborted) return false;
        if (renewed) this.extend(started);
        else await this.lose('another node holds the lease');
        return renewed;
      } catch (err) {
        this.o.renewalFailed?.(err);
        return null;
      } finally {
        this.renewing = null;
      }
    })();
    return this.renewing;
  }

  /** Gives the lease up (without calling `lost`): the next node need not wait for it to lapse. */
  async release(): Promise<void> {
    if (!this.end()) return;
    await this.o.leases.release(this.o.name, this.token).catch(() => false);
  }

  /** Stops renewing without a word to the store (a test's crash, or a store gone away). */
  drop(): void {
    this.end();
  }

  private extend(started: number): void {
    this.stopBy = started + this.o.ttlMs - this.marginMs;
    clearTimeout(this.watchdog);
    // Its own timer, so a renewal hung on a dead database still stops on time.
    this.watchdog = setTimeout(() => void this.lose('the lease was not renewed in time'), Math.max(0, this.stopBy - this.mono()));
    this.watchdog.unref();
  }

  private async lose(why: string): Promise<void> {
    if (!this.end()) return;
    try {
      await this.o.lost(why);
    } finally {
      // Stopped here first; then, when the store still answers, the lease goes at once instead of lapsing.
      await this.o.leases.release(this.o.name, this.token).catch(() => false);
    }
  }

  /** False when it had ended already. */
  private end(): boolean {
    if (this.abort.signal.aborted) return false;
    this.abort.abort();
    clearInterval(this.renewer);
    clearTimeout(this.watchdog);
    return true;
  }
}
