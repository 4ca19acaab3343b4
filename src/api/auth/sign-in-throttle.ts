import { DomainError } from '../../domain/errors.js';
import type { Clock } from '../../infra/clock.js';
import { ACCOUNT_POLICY, ADDRESS_POLICY, AttemptLimiter, PAIR_POLICY } from './attempt-limiter.js';

/**
 * Password and secret checks in flight at once, across all accounts: beyond it an attempt is
 * refused at once rather than queued behind scrypt, so a flood from many addresses costs bounded
 * memory and time, and honest sign-ins wait seconds, not minutes.
 */
const MAX_CHECKS_IN_FLIGHT = 64;

/** One sign-in attempt: who it names (an e-mail or a client token) and where it comes from. */
export interface Attempt {
  account: string;
  address: string;
}

/**
 * The sign-in limits. The tight one is per (account, address): a guesser is refused after ten
 * failures while the owner, from anywhere else, still signs in; a per-account lock would let
 * anyone lock anyone out. Per address caps one source across accounts; per account is the
 * ceiling for guesses spread over many addresses.
 */
export class SignInThrottle {
  private readonly pair: AttemptLimiter;
  private readonly address: AttemptLimiter;
  private readonly account: AttemptLimiter;
  private inFlight = 0;

  constructor(
    clock: Clock,
    private readonly maxInFlight = MAX_CHECKS_IN_FLIGHT,
  ) {
    this.pair = new AttemptLimiter(clock, PAIR_POLICY);
    this.address = new AttemptLimiter(clock, ADDRESS_POLICY);
    this.account = new AttemptLimiter(clock, ACCOUNT_POLICY);
  }

  /**
   * Refuses (429) or reserves a failure on every limit, before the expensive check runs. Check and
   * reservation happen in one synchronous step, so attempts arriving together cannot all pass.
   */
  begin(attempt: Attempt): void {
    const keys = this.keys(attempt);
    const wait = Math.max(...keys.map(([limiter, key]) => limiter.blockedFor(key)));
    if (wait > 0) throw new DomainError('rate_limited', 'too many failed attempts; try again later', undefined, wait);
    if (this.inFlight >= this.maxInFlight) throw new DomainError('rate_limited', 'too many sign-ins at once; try again shortly', undefined, 1);
    this.inFlight += 1;
    for (const [limiter, key] of keys) limiter.begin(key);
  }

  /** The attempt was wrong: the reservations become failures; resolves after the slowdown they earn. */
  async fail(attempt: Attempt): Promise<void> {
    this.inFlight -= 1;
    const delay = Math.max(...this.keys(attempt).map(([limiter, key]) => limiter.fail(key)));
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
  }

  /**
   * The attempt was right: its pair starts afresh. The address and account counts stay (a
   * guesser's own valid sign-ins must not wipe its failures elsewhere); only the reservation goes.
   */
  succeed(attempt: Attempt): void {
    this.inFlight -= 1;
    this.pair.succeed(this.pairKey(attempt));
    this.address.abandon(attempt.address);
    this.account.abandon(attempt.account);
  }

  /** The check broke (a store error): nothing is counted. */
  abandon(attempt: Attempt): void {
    this.inFlight -= 1;
    for (const [limiter, key] of this.keys(attempt)) limiter.abandon(key);
  }

  private keys(attempt: Attempt): [AttemptLimiter, string][] {
    return [
      [this.pair, this.pairKey(attempt)],
      [this.address, attempt.address],
      [this.account, attempt.account],
    ];
  }

  private pairKey(attempt: Attempt): string {
    return `${attempt.account}\n${attempt.address}`;
  }
}
