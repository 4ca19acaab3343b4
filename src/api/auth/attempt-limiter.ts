import type { Clock } from '../../infra/clock.js';

export interface LimiterPolicy {
  /** Failures within the window before answers are slowed. */
  freeFailures: number;
  /** Failures within the window before requests are refused. */
  maxFailures: number;
  windowMs: number;
  /** Added delay per failure beyond the free ones. */
  stepDelayMs: number;
}

/** Per account or client token: a person mistyping gets a few free tries. */
export const ACCOUNT_POLICY: LimiterPolicy = { freeFailures: 3, maxFailures: 10, windowMs: 15 * 60_000, stepDelayMs: 250 };
/** Per address: looser, since many honest users can share one (NAT, proxies). */
export const ADDRESS_POLICY: LimiterPolicy = { freeFailures: 20, maxFailures: 100, windowMs: 15 * 60_000, stepDelayMs: 100 };

interface Entry {
  failures: number;
  windowStart: number;
}

/**
 * Counts failed sign-ins per key (an account, a client token, an address): the first few are
 * free, then each answer is slowed, then refused with 429 until the window ends.
 */
export class AttemptLimiter {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly clock: Clock,
    private readonly policy: LimiterPolicy,
  ) {}

  /** Seconds until `key` may try again, or 0 when allowed. */
  blockedFor(key: string): number {
    const now = this.clock.now().getTime();
    const entry = this.live(key, now);
    if (!entry || entry.failures < this.policy.maxFailures) return 0;
    return (entry.windowStart + this.policy.windowMs - now) / 1000;
  }

  /** Records a failure and says how long to hold the answer back. */
  fail(key: string): number {
    const now = this.clock.now().getTime();
    const entry = this.live(key, now) ?? { failures: 0, windowStart: now };
    entry.failures += 1;
    this.entries.set(key, entry);
    if (this.entries.size > 100_000) this.prune(now);
    return Math.min(2000, Math.max(0, entry.failures - this.policy.freeFailures) * this.policy.stepDelayMs);
  }

  succeed(key: string): void {
    this.entries.delete(key);
  }

  private live(key: string, now: number): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry && now - entry.windowStart >= this.policy.windowMs) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  private prune(now: number): void {
    for (const [key, entry] of this.entries) if (now - entry.windowStart >= this.policy.windowMs) this.entries.delete(key);
  }
}
