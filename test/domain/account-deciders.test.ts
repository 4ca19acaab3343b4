import { accountDecider } from '../../src/domain/account/account-decider.js';
import type { AccountRegistryEvent } from '../../src/domain/account/events.js';
import { registryDecider, type RegisterAccount } from '../../src/domain/account/registry-decider.js';
import { deciderSpec } from '../support/decider-spec.js';

const register = (account_id: string, email: string): RegisterAccount => ({
  type: 'RegisterAccount',
  data: { account_id, email, password_hash: 'p', client_token: `ct_${account_id}`, client_secret_hash: 's' },
});
const registered = (account_id: string, email: string, user_id: number): AccountRegistryEvent => ({
  type: 'AccountRegistered',
  data: { ...register(account_id, email).data, user_id },
});

describe('account registry decider', () => {
  const spec = deciderSpec(registryDecider);

  it('numbers accounts in sign-up order', () =>
    spec.given([registered('a', 'a@x.io', 1)]).when(register('b', 'b@x.io')).then([registered('b', 'b@x.io', 2)]));

  it('refuses an e-mail that is taken', () =>
    spec.given([registered('a', 'a@x.io', 1)]).when(register('b', 'a@x.io')).thenThrows('conflict'));
});

describe('account decider', () => {
  it('rotates the client secret', () =>
    deciderSpec(accountDecider)
      .given([])
      .when({ type: 'RotateClientSecret', data: { account_id: 'a', client_secret_hash: 'n' } })
      .then([{ type: 'ClientSecretRotated', data: { account_id: 'a', client_secret_hash: 'n' } }]));
});
