import type { Decider } from '../decider.js';
import { conflict } from '../errors.js';
import type { AccountRegistryEvent } from './events.js';

export interface RegistryState {
  emails: ReadonlySet<string>;
  count: number;
}

export type RegisterAccount = {
  type: 'RegisterAccount';
  data: { account_id: string; email: string; password_hash: string; client_token: string; client_secret_hash: string };
};

export const registryDecider: Decider<RegistryState, RegisterAccount, AccountRegistryEvent> = {
  initialState: () => ({ emails: new Set(), count: 0 }),

  evolve(state, event) {
    switch (event.type) {
      case 'AccountRegistered':
        return { emails: new Set(state.emails).add(event.data.email), count: state.count + 1 };
    }
  },

  decide(command, state) {
    if (state.emails.has(command.data.email)) throw conflict('an account with this e-mail exists');
    return [{ type: 'AccountRegistered', data: { ...command.data, user_id: state.count + 1 } }];
  },
};
