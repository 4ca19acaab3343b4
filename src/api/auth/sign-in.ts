import { DomainError, unauthorized } from '../../domain/errors.js';
import type { Clock } from '../../infra/clock.js';
import { hashPassword, randomToken, sameHash, tokenHash, verifyPassword } from '../../infra/crypto/secrets.js';
import type { SignInRecorder } from '../../commands/sign-ins.js';
import type { AccountQueries } from '../../projections/accounts/account-queries.js';
import type { AttemptLimiter } from './attempt-limiter.js';
import type { JwtIssuer } from './jwt.js';

type Keys = { account: string; address: string };

/** E-mail/password and client-credential sign-in, both throttled per account and address. */
export class SignIn {
  private dummyHash: Promise<string> | null = null;

  constructor(
    private readonly accounts: AccountQueries,
    private readonly jwt: JwtIssuer,
    private readonly limiters: { account: AttemptLimiter; address: AttemptLimiter },
    private readonly clock: Clock,
    private readonly scryptLogN: number,
    /** The audit trail of sign-ins; called once per answered attempt on a known account. */
    private readonly recorder?: SignInRecorder,
  ) {}

  /** Verifying against this when the e-mail is unknown keeps both answers equally slow. */
  private dummy(): Promise<string> {
    return (this.dummyHash ??= hashPassword(randomToken(''), this.scryptLogN));
  }

  async login(email: string, password: string, ip: string) {
    const normalized = email.trim().toLowerCase();
    const keys = { account: `login:${normalized}`, address: ip };
    this.refuseIfBlocked(keys);
    const account = await this.accounts.byEmail(normalized);
    const ok = await verifyPassword(password, account?.password_hash ?? (await this.dummy()));
    if (account) await this.recorder?.[ok ? 'succeeded' : 'failed'](account._id, 'password', ip);
    if (!account || !ok) return this.failed(keys, 'wrong e-mail or password');
    this.limiters.account.succeed(keys.account);
    return this.jwt.issue(account._id, this.clock.now());
  }

  async token(clientToken: string, clientSecret: string, ip: string) {
    const keys = { account: `client:${clientToken}`, address: ip };
    this.refuseIfBlocked(keys);
    const account = await this.accounts.byClientToken(clientToken);
    const ok = sameHash(tokenHash(clientSecret), account?.client_secret_hash ?? tokenHash(''));
    if (account) await this.recorder?.[ok ? 'succeeded' : 'failed'](account._id, 'client_credentials', ip);
    if (!account || !ok) return this.failed(keys, 'wrong client_token or client_secret');
    this.limiters.account.succeed(keys.account);
    return this.jwt.issue(account._id, this.clock.now());
  }

  private refuseIfBlocked(keys: Keys): void {
    const wait = Math.max(this.limiters.account.blockedFor(keys.account), this.limiters.address.blockedFor(keys.address));
    if (wait > 0) throw new DomainError('rate_limited', 'too many failed attempts; try again later', undefined, wait);
  }

  private async failed(keys: Keys, message: string): Promise<never> {
    const delay = Math.max(this.limiters.account.fail(keys.account), this.limiters.address.fail(keys.address));
    if (delay > 0) await new Promise((r) => setTimeout(r, delay));
    throw unauthorized(message);
  }
}
