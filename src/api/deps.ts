import type { AccountCommands } from '../commands/accounts.js';
import type { CommandContext } from '../domain/audit.js';
import type { InstanceCommands } from '../commands/instances.js';
import type { Clock } from '../infra/clock.js';
import type { Config } from '../infra/config/config.js';
import type { AccountQueries } from '../projections/accounts/account-queries.js';
import type { InstanceQueries } from '../projections/instances/instance-queries.js';
import type { SignIn } from './auth/sign-in.js';
import type { SignOut } from './auth/sign-out.js';
import type { Principal } from './route.js';

/** What the routes may use: application services and queries, never adapters. */
export interface ApiDeps {
  config: Config;
  clock: Clock;
  version: string;
  accounts: AccountCommands;
  instances: InstanceCommands;
  signIn: SignIn;
  /** Ends the web app session's access token on sign-out; without it, sign-out only clears the cookie. */
  signOut?: SignOut;
  accountQueries: AccountQueries;
  instanceQueries: InstanceQueries;
  health: { ready(): Promise<{ ready: boolean; checks: Record<string, boolean | string> }> };
}

/**
 * Audit metadata for a command caused by an HTTP request: the request is both the correlation
 * and the cause. A call made with the token pair is the instance token's, not the account's.
 */
export function commandContext(principal: Principal, requestId: string, instanceId?: string): CommandContext {
  const context: CommandContext = {
    actor: principal.via === 'instance_token' && instanceId ? { kind: 'instance_token', id: instanceId } : { kind: 'account', id: principal.accountId },
    correlationId: requestId,
    causationId: requestId,
    accountId: principal.accountId,
  };
  if (instanceId) context.instanceId = instanceId;
  return context;
}
