import type { Decider } from '../decider.js';
import { conflict } from '../errors.js';
import type { AccountRegistryEvent } from './events.js';

/**
 * The registered e-mails, by the order they registered in, shared by the successive states of one
 * fold: a state of `count` registrations sees the e-mails registered `count`th or earlier. So
 * folding a registration adds one entry instead of copying the set (folding the registry is linear
 * in accounts, not quadratic), and every state still answers as if it held its own set.
 */
class EmailIndex {
  readonly order = new Map<string, number>();
  /** Registrations the index holds: the `count` of the newest state that uses it. */
  top = 0;

  /** An older state's own copy, for when it is evolved again (a second branch from it). */
  upTo(count: number): EmailIndex {
    const copy = new EmailIndex();
    for (const [email, n] of this.order) if (n <= count) copy.order.set(email, n);
    copy.top = count;
    return copy;
  }
}

export interface RegistryState {
  readonly count: number;
  readonly emails: EmailIndex;
}

export const isRegistered = (state: RegistryState, email: string): boolean => {
  const n = state.emails.order.get(email);
  return n !== undefined && n <= state.count;
};

export type RegisterAccount = {
  type: 'RegisterAccount';
  data: { account_id: string; email: string; password_hash: string; client_token: string; client_secret_hash: string };
};

export const registryDecider: Decider<RegistryState, RegisterAccount, AccountRegistryEvent> = {
  eventTypes: { AccountRegistered: true },

  initialState: () => ({ count: 0, emails: new EmailIndex() }),

  evolve(state, event) {
    switch (event.type) {
      case 'AccountRegistered': {
        // The newest state extends the shared index; an older one gets its own first.
        const emails = state.emails.top === state.count ? state.emails : state.emails.upTo(state.count);
        const count = state.count + 1;
        if (!emails.order.has(event.data.email)) emails.order.set(event.data.email, count);
        emails.top = count;
        return { count, emails };
      }
    }
  },

  decide(command, state) {
    if (isRegistered(state, command.data.email)) throw conflict('an account with this e-mail exists');
    return [{ type: 'AccountRegistered', data: { ...command.data, user_id: state.count + 1 } }];
  },
};
