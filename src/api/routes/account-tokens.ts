import type { AccessTokenCommands } from '../../commands/access-tokens.js';
import { notFound } from '../../domain/errors.js';
import type { Clock } from '../../infra/clock.js';
import type { AccessTokenQueries } from '../../projections/accounts/access-token-queries.js';
import type { AccountQueries } from '../../projections/accounts/account-queries.js';
import { commandContext } from '../deps.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { ActiveTokens, RevokedToken, TokenIdParams } from '../schemas/account-tokens.js';

const TAG = 'Accounts';

export interface AccountTokenDeps {
  accounts: AccountQueries;
  tokens: AccessTokenQueries;
  commands: AccessTokenCommands;
  clock: Clock;
}

/** The account's active access tokens, and revoking one (the owner's JWT only). */
export function accountTokenRoutes(deps: AccountTokenDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/account/tokens',
      tag: TAG,
      summary: 'The access tokens that still open this account, newest first, the caller\'s own marked `current`',
      auth: 'jwt',
      response: { description: 'active tokens', schema: ActiveTokens },
      errors: [404],
      handler: async ({ principal }) => {
        const account = await deps.accounts.byId(principal.accountId);
        if (!account) throw notFound('account not found');
        const tokens = await deps.tokens.active(account._id, account.secret_generation ?? 0, deps.clock.now());
        return {
          body: {
            tokens: tokens.map((t) => ({
              id: t._id,
              issued_by: t.issued_by,
              issued_at: t.issued_at,
              expires_at: t.expires_at,
              last_used_at: t.last_used_at,
              address: t.address,
              user_agent: t.user_agent,
              current: t._id === principal.tokenId,
            })),
          },
          headers: { 'Cache-Control': 'no-store' },
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/account/tokens/{id}/revoke',
      tag: TAG,
      summary: 'End one access token at once, on every node; revoking the current one signs this session out',
      auth: 'jwt',
      params: TokenIdParams,
      response: { description: 'revoked', schema: RevokedToken },
      errors: [400, 404],
      handler: async ({ principal, params, requestId }) => {
        const { revoked_at } = await deps.commands.revoke(principal.accountId, params.id, commandContext(principal, requestId));
        return { body: { id: params.id, revoked_at } };
      },
    }),
  ];
}
