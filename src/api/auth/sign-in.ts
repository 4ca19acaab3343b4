import { unauthorized } from '../../domain/errors.js';
import type { Clock } from '../../infra/clock.js';
import { hashPassword, randomToken, sameHash, tokenHash, verifyPassword } from '../../infra/crypto/secrets.js';
import type { IssuedVia, SignInMethod, SignInRecorder } from '../../commands/sign-ins.js';
import type { IdGenerator } from '../../infra/ids.js';
import type { AccountQueries } from '../../projections/accounts/account-queries.js';
import type { AccountDoc } from '../../projections/accounts/accounts-projection.js';
import type { JwtIssuer } from './jwt.js';
import type { Attempt, SignInThrottle } from './sign-in-throttle.js';

/** Who asks for a token: kept with the token in the registry the account area lists. */
export interface SignInClient {
  address: string;
  userAgent: string;
  via: IssuedVia;
}

/** Longer user agents are cut: the registry describes a client, it does not archive headers. */
const USER_AGENT_CHARS = 256;

/** E-mail/password and client-credential sign-in, both throttled per account and address. */
export class SignIn {
  private dummyHash: Promise<string> | null = null;

  constructor(
    private readonly accounts: AccountQueries,
    private readonly jwt: JwtIssuer,
    private readonly throttle: SignInThrottle,
    private readonly clock: Clock,
    private readonly scryptLogN: number,
    /** The audit trail of sign-ins, and the registry of the tokens they issue: once per answered attempt on a known account. */
    private readonly recorder: SignInRecorder,
    private readonly ids: IdGenerator,
  ) {}

  /** Verifying against this when the e-mail is unknown keeps both answers equally slow. */
  private dummy(): Promise<string> {
    return (this.dummyHash ??= hashPassword(randomToken(''), this.scryptLogN));
  }

  async login(email: string, password: string, client: SignInClient) {
    const normalized = email.trim().toLowerCase();
    return this.attempt({ account: `login:${normalized}`, address: client.address }, client, 'wrong e-mail or password', 'password', async () => {
      const account = await this.accounts.byEmail(normalized);
      const ok = await verifyPassword(password, account?.password_hash ?? (await this.dummy()));
      return { account, ok };
    });
  }

  async token(clientToken: string, clientSecret: string, client: SignInClient) {
    return this.attempt({ account: `client:${clientToken}`, address: client.address }, client, 'wrong client_token or client_secret', 'client_credentials', async () => {
      const account = await this.accounts.byClientToken(clientToken);
      const ok = sameHash(tokenHash(clientSecret), account?.client_secret_hash ?? tokenHash(''));
      return { account, ok };
    });
  }

  /**
   * Reserves the attempt's failure before `check` (the expensive part) runs, then settles it; an
   * answered attempt on a known account goes into its audit trail. A success is recorded with the
   * token it issues before the token is handed out: no token exists that the registry cannot list.
   */
  private async attempt(attempt: Attempt, client: SignInClient, wrong: string, method: SignInMethod, check: () => Promise<{ account: AccountDoc | null; ok: boolean }>) {
    this.throttle.begin(attempt);
    let issued: Awaited<ReturnType<JwtIssuer['issue']>> | null = null;
    try {
      const { account, ok } = await check();
      if (account && ok) {
        const now = this.clock.now();
        const jti = `at_${this.ids.alphanumeric(24).toLowerCase()}`;
        const generation = account.secret_generation ?? 0;
        issued = await this.jwt.issue(account._id, generation, now, jti);
        await this.recorder.succeeded(account._id, method, attempt.address, {
          jti,
          via: client.via,
          user_agent: client.userAgent.slice(0, USER_AGENT_CHARS),
          expires_at: new Date(now.getTime() + issued.expires_in * 1000).toISOString(),
          generation,
        });
      } else if (account) await this.recorder.failed(account._id, method, attempt.address);
    } catch (err) {
      this.throttle.abandon(attempt);
      throw err;
    }
    if (!issued) {
      await this.throttle.fail(attempt);
      throw unauthorized(wrong);
    }
    this.throttle.succeed(attempt);
    return issued;
  }
}
