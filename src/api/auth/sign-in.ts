import { unauthorized } from '../../domain/errors.js';
import type { Clock } from '../../infra/clock.js';
import { hashPassword, randomToken, sameHash, tokenHash, verifyPassword } from '../../infra/crypto/secrets.js';
import type { SignInMethod, SignInRecorder } from '../../commands/sign-ins.js';
import type { AccountQueries } from '../../projections/accounts/account-queries.js';
import type { AccountDoc } from '../../projections/accounts/accounts-projection.js';
import type { JwtIssuer } from './jwt.js';
import type { Attempt, SignInThrottle } from './sign-in-throttle.js';

/** E-mail/password and client-credential sign-in, both throttled per account and address. */
export class SignIn {
  private dummyHash: Promise<string> | null = null;

  constructor(
    private readonly accounts: AccountQueries,
    private readonly jwt: JwtIssuer,
    private readonly throttle: SignInThrottle,
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
    return this.attempt({ account: `login:${normalized}`, address: ip }, 'wrong e-mail or password', 'password', async () => {
      const account = await this.accounts.byEmail(normalized);
      const ok = await verifyPassword(password, account?.password_hash ?? (await this.dummy()));
      return { account, ok };
    });
  }

  async token(clientToken: string, clientSecret: string, ip: string) {
    return this.attempt({ account: `client:${clientToken}`, address: ip }, 'wrong client_token or client_secret', 'client_credentials', async () => {
      const account = await this.accounts.byClientToken(clientToken);
      const ok = sameHash(tokenHash(clientSecret), account?.client_secret_hash ?? tokenHash(''));
      return { account, ok };
    });
  }

  /**
   * Reserves the attempt's failure before `check` (the expensive part) runs, then settles it; an
   * answered attempt on a known account goes into its audit trail.
   */
  private async attempt(attempt: Attempt, wrong: string, method: SignInMethod, check: () => Promise<{ account: AccountDoc | null; ok: boolean }>) {
    this.throttle.begin(attempt);
    let account: AccountDoc | null;
    try {
      const checked = await check();
      if (checked.account) await this.recorder?.[checked.ok ? 'succeeded' : 'failed'](checked.account._id, method, attempt.address);
      account = checked.ok ? checked.account : null;
    } catch (err) {
      this.throttle.abandon(attempt);
      throw err;
    }
    if (!account) {
      await this.throttle.fail(attempt);
      throw unauthorized(wrong);
    }
    this.throttle.succeed(attempt);
    return this.jwt.issue(account._id, account.secret_generation ?? 0, this.clock.now());
  }
}
