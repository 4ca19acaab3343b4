import { accountStream, type SignInEvent } from '../domain/account/events.js';
import type { Clock } from '../infra/clock.js';
import type { EventStore } from '../infra/eventstore/port.js';
import type { IdGenerator } from '../infra/ids.js';
import type { Actor } from '../domain/actor.js';
import { auditMetadata } from './command-handler.js';

export type SignInMethod = SignInEvent['data']['method'];

/** What sign-in tells the audit trail: once per answered attempt on a known account. */
export interface SignInRecorder {
  succeeded(accountId: string, method: SignInMethod, address: string): Promise<void>;
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
  ) {}

  succeeded(accountId: string, method: SignInMethod, address: string): Promise<void> {
    return this.append(accountId, { type: 'SignInSucceeded', data: { method, address } }, { kind: 'account', id: accountId });
  }

  failed(accountId: string, method: SignInMethod, address: string): Promise<void> {
    // Whoever tried is not known to be the account: the gateway records the refusal.
    return this.append(accountId, { type: 'SignInFailed', data: { method, address } }, { kind: 'system' });
  }

  private async append(accountId: string, event: SignInEvent, actor: Actor): Promise<void> {
    const correlationId = `signin-${this.ids.uuid()}`;
    const metadata = auditMetadata({ actor, correlationId, accountId }, this.clock.now());
    await this.store.append(accountStream(accountId), [{ id: this.ids.uuid(), type: event.type, data: { ...event.data }, metadata }], 'any');
  }
}
