import type { AccessTokenCommands } from '../../commands/access-tokens.js';
import { DomainError } from '../../domain/errors.js';
import type { Clock } from '../../infra/clock.js';
import type { JwtIssuer } from './jwt.js';

/**
 * Signing the web app out ends its access token, not only the cookie: a copied cookie must not
 * outlive the sign-out, and the account area must not list a session its owner closed.
 */
export class SignOut {
  constructor(
    private readonly jwt: JwtIssuer,
    private readonly tokens: AccessTokenCommands,
    private readonly clock: Clock,
  ) {}

  /** Revokes the token when it is a live one of ours; anything else has nothing left to end. */
  async end(accessToken: string, requestId: string): Promise<void> {
    const now = this.clock.now();
    // `known` answers null for a token it knows to be dead: verifying that again is wasted work.
    const known = this.jwt.known(accessToken, now);
    const claims = known !== undefined ? known : await this.jwt.verify(accessToken, now);
    if (!claims) return;
    const { accountId, jti } = claims;
    try {
      await this.tokens.revoke(accountId, jti, { actor: { kind: 'account', id: accountId }, correlationId: requestId, causationId: requestId, accountId });
    } catch (err) {
      // Not in the registry (issued before tokens were registered, or still being folded): it dies with its expiry.
      if (!(err instanceof DomainError && err.type === 'not_found')) throw err;
    }
  }
}
