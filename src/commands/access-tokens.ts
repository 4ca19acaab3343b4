import { accountDecider } from '../domain/account/account-decider.js';
import { accountStream } from '../domain/account/events.js';
import { notFound } from '../domain/errors.js';
import type { Clock } from '../infra/clock.js';
import type { AccessTokenQueries } from '../projections/accounts/access-token-queries.js';
import { accessTokensProjection } from '../projections/accounts/access-tokens-projection.js';
import type { CommandHandler } from './command-handler.js';
import type { CommandContext } from '../domain/audit.js';
import type { ReadYourWrites } from './read-your-writes.js';

/** Ending one access token of an account, recorded on the account's stream for its history. */
export class AccessTokenCommands {
  constructor(
    private readonly handler: CommandHandler,
    private readonly rw: ReadYourWrites,
    private readonly tokens: AccessTokenQueries,
    private readonly clock: Clock,
  ) {}

  /**
   * Revokes `jti` when it is one of the account's tokens (404 otherwise, another account's
   * included: its existence is not ours to tell). Revoking a revoked token changes nothing and
   * answers when it was revoked. Answers once the registry, and so this node, refuses the token.
   */
  async revoke(accountId: string, jti: string, context: CommandContext): Promise<{ revoked_at: string }> {
    const token = await this.tokens.byId(jti);
    if (!token || token.account_id !== accountId) throw notFound('no such access token on this account');
    if (token.revoked_at !== undefined) return { revoked_at: token.revoked_at };
    const at = this.clock.now();
    const { position } = await this.handler.handle(accountStream(accountId), accountDecider, { type: 'RevokeAccessToken', data: { jti } }, { ...context, occurredAt: at });
    await this.rw.settle(position, [accessTokensProjection.name]);
    return { revoked_at: at.toISOString() };
  }
}
