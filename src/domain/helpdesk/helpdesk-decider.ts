import type { Decider } from '../decider.js';
import { conflict, invalidInput, notFound } from '../errors.js';
import type { HelpdeskConfiguredData, HelpdeskEvent } from './events.js';

export interface HelpdeskState {
  config: HelpdeskConfiguredData | null;
  /** Configurations removed so far: a new one after a removal gets a new callback path. */
  removals: number;
}

/**
 * A save as the command service resolved it against the helpdesk (inbox found or created, its
 * secret read). The token may be omitted after the first save (the current one is kept); the
 * config id never changes while a configuration exists.
 */
export interface SaveHelpdesk {
  type: 'SaveHelpdesk';
  data: Omit<HelpdeskConfiguredData, 'config_id' | 'token_sealed' | 'token_masked'> & {
    token?: { sealed: string; masked: string };
    /** Used only when there is no configuration yet. */
    new_config_id: string;
  };
}

export type HelpdeskCommand = SaveHelpdesk | { type: 'RemoveHelpdesk' };

export const helpdeskDecider: Decider<HelpdeskState, HelpdeskCommand, HelpdeskEvent> = {
  // The stream also carries the helpdesk's own happenings (agents' replies): facts, not decisions.
  eventTypes: { HelpdeskConfigured: true, HelpdeskRemoved: true },

  initialState: () => ({ config: null, removals: 0 }),

  evolve(state, event) {
    switch (event.type) {
      case 'HelpdeskConfigured':
        return { ...state, config: event.data };
      case 'HelpdeskRemoved':
        return { config: null, removals: state.removals + 1 };
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'SaveHelpdesk': {
        const { token, new_config_id, ...resolved } = command.data;
        // The URL pushed to the helpdesk was derived for this generation; a removal in between
        // would make it point nowhere.
        if (resolved.callback_generation !== state.removals) throw conflict('the helpdesk configuration changed meanwhile; retry');
        const current = state.config;
        const sealedToken = token ?? (current ? { sealed: current.token_sealed, masked: current.token_masked } : null);
        if (!sealedToken) throw invalidInput('token', 'required on the first save');
        return [
          {
            type: 'HelpdeskConfigured',
            data: {
              config_id: current?.config_id ?? new_config_id,
              settings: resolved.settings,
              token_sealed: sealedToken.sealed,
              token_masked: sealedToken.masked,
              inbox_id: resolved.inbox_id,
              inbox_identifier: resolved.inbox_identifier,
              inbox_secret_sealed: resolved.inbox_secret_sealed,
              callback_generation: resolved.callback_generation,
              callback_path_hash: resolved.callback_path_hash,
            },
          },
        ];
      }
      case 'RemoveHelpdesk':
        if (!state.config) throw notFound('no helpdesk configuration for this instance');
        return [{ type: 'HelpdeskRemoved', data: {} }];
    }
  },
};

/** `token_masked` of CONTRACT.md: first 4 + "…" + last 4, all `*` when shorter than 12. */
export function maskToken(token: string): string {
  return token.length < 12 ? '*'.repeat(token.length) : `${token.slice(0, 4)}…${token.slice(-4)}`;
}
