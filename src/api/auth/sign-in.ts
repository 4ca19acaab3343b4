import { unauthorized } from '../../domain/errors.js';
import type { Clock } from '../../infra/clock.js';
import { hashPassword, randomToken, sameHash, tokenHash, verifyPassword } from '../../infra/crypto/secrets.js';
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
  ) {}

  /** Verifying against this when the e-mail is unknown keeps both answers equally slow. */
  private dummy(): Promise<string> {
    return (this.dummyHash ??= hashPassword(randomToken(''), this.scryptLogN));
  }

  async login(email: string, password: string, ip: string) {
    const normalized = email.trim().toLowerCase();
    return this.attempt({ account: `login:${normalized}`, address: ip }, 'wrong e-mail or password', async () => {
      const account = await this.accounts.byEmail(normalized);
      const ok = await verifyPassword(password, account?.password_hash ?? (await this.dummy()));
      return ok ? account : null;
    });
  }

  async token(clientToken: string, clientSecret: string, ip: string) {
    return this.attempt({ account: `client:${clientToken}`, address: ip }, 'wrong client_token or client_secret', async () => {
      const account = await this.accounts.byClientToken(clientToken);
      const ok = sameHash(tokenHash(clientSecret), account?.client_secret_hash ?? tokenHash(''));
      return ok ? account : null;
    });
  }

  /** Reserves the attempt's failure before `check` (the expensive part) runs, then settles it. */
  private async attempt(attempt: Attempt, wrong: string, check: () => Promise<AccountDoc | null>) {
    this.throttle.begin(attempt);
    let account: AccountDoc | null;
    try {
      account = await check();
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
