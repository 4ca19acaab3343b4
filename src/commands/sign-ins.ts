import { accountStream, type SignInEvent } from '../domain/account/events.js';
import type { Clock } from '../infra/clock.js';
import type { EventStore } from '../infra/eventstore/port.js';
import type { IdGenerator } from '../infra/ids.js';
import type { Actor } from '../domain/actor.js';
import { auditMetadata } from '../domain/audit.js';
import { accessTokensProjection } from '../projections/accounts/access-tokens-projection.js';
import type { ReadYourWrites } from './read-your-writes.js';

export type SignInMethod = SignInEvent['data']['method'];
type SucceededData = Extract<SignInEvent, { type: 'SignInSucceeded' }>['data'];
export type { IssuedVia } from '../domain/account/events.js';

/**
 * The access token a successful sign-in issued, as the registry keeps it (never the token): the
 * event's token fields, every one present (they are optional only on sign-ins from before).
 */
export type IssuedToken = Required<Pick<SucceededData, 'jti' | 'via' | 'user_agent' | 'expires_at' | 'generation'>>;

/** What sign-in tells the audit trail: once per answered attempt on a known account. */
export interface SignInRecorder {
  succeeded(accountId: string, method: SignInMethod, address: string, token: IssuedToken): Promise<void>;
  failed(accountId: string, method: SignInMethod, address: string): Promise<void>;
}

/**
 * Appends sign-ins to `account-<id>`. They are facts, not decisions, so they append at any
 * revision; the sign-in is their own correlation (it has no request id to hand down).
 */
export class EventSignInRecorder implements SignInRecorder {
  constructor(
    private readonly store: EventStore,
    private readonly ids: IdGenerator,
    private readonly clock: Clock,
    /** When given, a success answers once the token registry lists the new token (the account area reads it next). */
    private readonly rw?: ReadYourWrites,
  ) {}

  async succeeded(accountId: string, method: SignInMethod, address: string, token: IssuedToken): Promise<void> {
    const position = await this.append(accountId, { type: 'SignInSucceeded', data: { method, address, ...token } }, { kind: 'account', id: accountId });
    await this.rw?.settle(position, [accessTokensProjection.name]);
  }

  async failed(accountId: string, method: SignInMethod, address: string): Promise<void> {
    // Whoever tried is not known to be the account: the gateway records the refusal.
    await this.append(accountId, { type: 'SignInFailed', data: { method, address } }, { kind: 'system' });
  }

  private async append(accountId: string, event: SignInEvent, actor: Actor): Promise<bigint> {
    const correlationId = `signin-${this.ids.uuid()}`;
    const metadata = auditMetadata({ actor, correlationId, accountId }, this.clock.now());
    const { position } = await this.store.append(accountStream(accountId), [{ id: this.ids.uuid(), type: event.type, data: { ...event.data }, metadata }], 'any');
    return position;
  }
}
