import type { Decider } from '../decider.js';
import type { AccountEvent } from './events.js';

export interface AccountState {
  secretRotations: number;
}

export type RotateClientSecret = {
  type: 'RotateClientSecret';
  data: { account_id: string; client_secret_hash: string };
};

/**
 * Ends one access token. Which tokens exist and whose they are is checked against the tokens read
 * model before this is decided (the route answers 404 otherwise): folding every sign-in of a
 * long-lived account into this state, on each command, would cost more than the check is worth.
 */
export type RevokeAccessToken = {
  type: 'RevokeAccessToken';
  data: { jti: string };
};

export type AccountCommand = RotateClientSecret | RevokeAccessToken;

/** The per-account stream carries what changes after sign-up; sign-ins share it as facts beside them. */
export const accountDecider: Decider<AccountState, AccountCommand, AccountEvent> = {
  eventTypes: { ClientSecretRotated: true, AccessTokenRevoked: true },

  initialState: () => ({ secretRotations: 0 }),

  evolve(state, event) {
    switch (event.type) {
      case 'ClientSecretRotated':
        return { secretRotations: state.secretRotations + 1 };
      case 'AccessTokenRevoked':
        return state;
    }
  },

  decide(command) {
    switch (command.type) {
      case 'RotateClientSecret':
        return [{ type: 'ClientSecretRotated', data: command.data }];
      case 'RevokeAccessToken':
        return [{ type: 'AccessTokenRevoked', data: command.data }];
    }
  },
};
