import { DomainError } from '../../domain/errors.js';
import { BoundedMap } from '../../infra/bounded-map.js';

export interface RateLimitSettings {
  /** RATE_LIMIT_ACCOUNT_PER_S: requests per second per account, any route. */
  accountPerS: number;
  /** RATE_LIMIT_INSTANCE_PER_S: requests per second per instance, on its routes. */
  instancePerS: number;
}

/** Buckets kept; the least recently used go first (a forgotten bucket is simply full again). */
const BUCKETS = 100_000;

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * Token buckets per account and per instance, each with a burst of twice its rate (CONTRACT.md,
 * Operations). An account spends only its own buckets, so one tenant's traffic never uses another's
 * budget. Refusals are 429 `rate_limited` with the seconds until a token is back.
 */
export class RateLimits {
  private readonly buckets = new BoundedMap<string, Bucket>(BUCKETS);

  constructor(
    private readonly settings: RateLimitSettings,
    private readonly nowMs: () => number = () => performance.now(),
  ) {}

  take(accountId: string, instanceId?: string): void {
    const now = this.nowMs();
    const account = this.bucket(`a:${accountId}`, this.settings.accountPerS, now);
    const instance = instanceId === undefined ? null : this.bucket(`i:${instanceId}`, this.settings.instancePerS, now);
    // Both must have a token before either is spent: a refused request costs nothing.
    const waitS = Math.max(waitFor(account, this.settings.accountPerS), instance ? waitFor(instance, this.settings.instancePerS) : 0);
    if (waitS > 0) {
      const which = instance && waitFor(instance, this.settings.instancePerS) >= waitS ? 'this instance' : 'this account';
      throw new DomainError('rate_limited', `too many requests for ${which}; retry later`, undefined, waitS);
    }
    account.tokens -= 1;
    if (instance) instance.tokens -= 1;
  }

  private bucket(key: string, ratePerS: number, now: number): Bucket {
    const burst = ratePerS * 2;
    let bucket = this.buckets.get(key);
    if (!bucket) {
      bucket = { tokens: burst, at: now };
      this.buckets.set(key, bucket);
      return bucket;
    }
    bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.at) / 1000) * ratePerS);
    bucket.at = now;
    return bucket;
  }
}

const waitFor = (bucket: Bucket, ratePerS: number) => (bucket.tokens >= 1 ? 0 : (1 - bucket.tokens) / ratePerS);
