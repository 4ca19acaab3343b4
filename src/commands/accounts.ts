import { accountDecider } from '../domain/account/account-decider.js';
import { ACCOUNT_REGISTRY_STREAM, accountStream } from '../domain/account/events.js';
import { registryDecider } from '../domain/account/registry-decider.js';
import { DomainError } from '../domain/errors.js';
import { hashPassword, randomToken, tokenHash } from '../infra/crypto/secrets.js';
import type { IdGenerator } from '../infra/ids.js';
import type { CommandHandler } from './command-handler.js';
import type { ReadYourWrites } from './read-your-writes.js';

export interface AccountCommandsOptions {
  scryptLogN: number;
  signupOpen: boolean;
}

const newClientSecret = () => randomToken('cs_', 32);

/** Sign-up and credential rotation: each answers once the accounts read model has it. */
export class AccountCommands {
  constructor(
    private readonly handler: CommandHandler,
    private readonly rw: ReadYourWrites,
    private readonly ids: IdGenerator,
    private readonly options: AccountCommandsOptions,
  ) {}

  async signup(email: string, password: string, correlationId: string) {
    if (!this.options.signupOpen) throw new DomainError('forbidden', 'sign-up is closed on this gateway');
    const accountId = `acc_${this.ids.alphanumeric(24).toLowerCase()}`;
    const clientToken = `ct_${this.ids.alphanumeric(32)}`;
    const clientSecret = newClientSecret();
    const normalized = email.trim().toLowerCase();
    const { position } = await this.handler.handle(
      ACCOUNT_REGISTRY_STREAM,
      registryDecider,
      {
        type: 'RegisterAccount',
        data: {
          account_id: accountId,
          email: normalized,
          password_hash: await hashPassword(password, this.options.scryptLogN),
          client_token: clientToken,
          client_secret_hash: tokenHash(clientSecret),
        },
      },
      { actor: { kind: 'account', id: accountId }, correlationId, accountId },
    );
    await this.rw.settle(position, ['accounts']);
    return { account_id: accountId, email: normalized, client_token: clientToken, client_secret: clientSecret };
  }

  async rotateClientSecret(accountId: string, correlationId: string) {
    const clientSecret = newClientSecret();
    const { position } = await this.handler.handle(
      accountStream(accountId),
      accountDecider,
      { type: 'RotateClientSecret', data: { account_id: accountId, client_secret_hash: tokenHash(clientSecret) } },
      { actor: { kind: 'account', id: accountId }, correlationId, accountId },
    );
    // The old secret must be dead when the caller gets the new one.
    await this.rw.settle(position, ['accounts']);
    return clientSecret;
  }
}
