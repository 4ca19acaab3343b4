/** CONTRACT.md: what an answer means for a delivery, and when the next attempt is. */

export interface RetryTiming {
  baseMs: number;
  maxMs: number;
  horizonMs: number;
}

/** Client errors that say "try again later" rather than "this will never work". */
const RETRYABLE_4XX = new Set([408, 425, 429]);

export type Verdict = 'delivered' | 'retry' | 'final';

export function verdictFor(status: number): Verdict {
  if (status >= 200 && status < 300) return 'delivered';
  if (status >= 400 && status < 500 && !RETRYABLE_4XX.has(status)) return 'final';
  return 'retry';
}

/**
 * Exponential backoff with full jitter: a uniform pick in [0, min(max, base·2^(n-1))] after the
 * n-th failed attempt, so receivers coming back from an outage are not hit by synchronized waves.
 * A Retry-After from the receiver is honoured as a floor (within the cap).
 */
export function retryDelayMs(timing: RetryTiming, failedAttempts: number, random: () => number, retryAfterMs?: number): number {
  const exponent = Math.min(Math.max(failedAttempts - 1, 0), 52);
  const ceiling = Math.min(timing.maxMs, timing.baseMs * 2 ** exponent);
  const jittered = Math.floor(random() * ceiling);
  if (retryAfterMs === undefined) return jittered;
  return Math.min(timing.maxMs, Math.max(jittered, retryAfterMs));
}

/** Retry-After as seconds or an HTTP date, in ms from `nowMs`; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}
