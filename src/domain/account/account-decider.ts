import type { Decider } from '../decider.js';
import type { AccountEvent } from './events.js';

export interface AccountState {
  secretRotations: number;
}

export type RotateClientSecret = {
  type: 'RotateClientSecret';
  data: { account_id: string; client_secret_hash: string };
};

/** The per-account stream carries what changes after sign-up. */
export const accountDecider: Decider<AccountState, RotateClientSecret, AccountEvent> = {
  eventTypes: { ClientSecretRotated: true },

  initialState: () => ({ secretRotations: 0 }),

  evolve(state, event) {
    switch (event.type) {
      case 'ClientSecretRotated':
        return { secretRotations: state.secretRotations + 1 };
    }
  },

  decide(command) {
    switch (command.type) {
      case 'RotateClientSecret':
        return [{ type: 'ClientSecretRotated', data: command.data }];
    }
  },
};
