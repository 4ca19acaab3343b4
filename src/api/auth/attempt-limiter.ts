import type { Clock } from '../../infra/clock.js';

export interface LimiterPolicy {
  /** Failures within the window before answers are slowed. */
  freeFailures: number;
  /** Failures (counting attempts still being checked) within the window before requests are refused. */
  maxFailures: number;
  windowMs: number;
  /** Added delay per failure beyond the free ones. */
  stepDelayMs: number;
}

/** Per (account, address): a person mistyping gets a few free tries; a guesser from one place gets ten. */
export const PAIR_POLICY: LimiterPolicy = { freeFailures: 3, maxFailures: 10, windowMs: 15 * 60_000, stepDelayMs: 250 };
/** Per address, across accounts: looser, since many honest users can share one (NAT, proxies). */
export const ADDRESS_POLICY: LimiterPolicy = { freeFailures: 20, maxFailures: 100, windowMs: 15 * 60_000, stepDelayMs: 100 };
/**
 * Per account, across addresses: the ceiling on guesses spread over many addresses. High, so that
 * locking the owner out takes a hundred addresses rather than one script; slowed long before.
 */
export const ACCOUNT_POLICY: LimiterPolicy = { freeFailures: 20, maxFailures: 100, windowMs: 15 * 60_000, stepDelayMs: 100 };

interface Entry {
  failures: number;
  /** Attempts being checked now, each counted as a failure until it is known not to be one. */
  pending: number;
  windowStart: number;
}

/** The shortest wait a refusal names (Retry-After is whole seconds, at least one). */
const MIN_RETRY_S = 1;

/**
 * Counts failed sign-ins per key. An attempt reserves its failure *before* the expensive check
 * (`begin`), so attempts sent together are counted as they arrive and the eleventh of thirty
 * simultaneous guesses is refused instead of checked; `fail` keeps the reservation, `succeed`
 * clears the key, `abandon` returns it (the check itself broke).
 */
export class AttemptLimiter {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly clock: Clock,
    private readonly policy: LimiterPolicy,
  ) {}

  /** Seconds until `key` may try again, or 0 when an attempt may start now. */
  blockedFor(key: string): number {
    const now = this.clock.now().getTime();
    const entry = this.live(key, now);
    if (!entry || entry.failures + entry.pending < this.policy.maxFailures) return 0;
    // Refused while attempts are still being checked: they count as the failures they nearly
    // always are (a burst of guesses), so the wait named is the window's end, when a retry can
    // succeed, not a second after which the same refusal would come again.
    return Math.max(MIN_RETRY_S, (entry.windowStart + this.policy.windowMs - now) / 1000);
  }

  /** Reserves one failure for an attempt about to be checked; ask `blockedFor` first. */
  begin(key: string): void {
    const now = this.clock.now().getTime();
    const entry = this.live(key, now) ?? { failures: 0, pending: 0, windowStart: now };
    entry.pending += 1;
    this.entries.set(key, entry);
    if (this.entries.size > 100_000) this.prune(now);
  }

  /** The reserved attempt failed; says how long to hold the answer back. */
  fail(key: string): number {
    const now = this.clock.now().getTime();
    const entry = this.live(key, now) ?? { failures: 0, pending: 1, windowStart: now };
    entry.pending = Math.max(0, entry.pending - 1);
    entry.failures += 1;
    this.entries.set(key, entry);
    return Math.min(2000, Math.max(0, entry.failures - this.policy.freeFailures) * this.policy.stepDelayMs);
  }

  /** The reserved attempt succeeded: the key starts afresh. */
  succeed(key: string): void {
    this.entries.delete(key);
  }

  /** The reserved attempt was neither right nor wrong (the check broke): its reservation goes. */
  abandon(key: string): void {
    const entry = this.entries.get(key);
    if (entry) entry.pending = Math.max(0, entry.pending - 1);
  }

  private live(key: string, now: number): Entry | undefined {
    const entry = this.entries.get(key);
    // A window ends only when nothing is in flight: a reservation must find its entry again.
    if (entry && entry.pending === 0 && now - entry.windowStart >= this.policy.windowMs) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  private prune(now: number): void {
    for (const [key, entry] of this.entries) if (entry.pending === 0 && now - entry.windowStart >= this.policy.windowMs) this.entries.delete(key);
  }
}
