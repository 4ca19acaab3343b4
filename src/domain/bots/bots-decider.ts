import type { Decider } from '../decider.js';
import { conflict, invalidInput, notFound } from '../errors.js';
import type { BotConfiguredData, BotSettings, BotsEvent } from './events.js';

export interface BotsState {
  bots: Readonly<Record<string, BotConfiguredData>>;
}

/** An instance's bots are few: each one reads every message of the instance. */
export const MAX_BOTS = 10;

export type BotsCommand =
  | {
      type: 'SaveBot';
      data: {
        bot_id: string;
        settings: BotSettings;
        /** Omitted: the current key stays; null: the bot has none (a local Ollama). */
        api_key?: { sealed: string; masked: string } | null;
      };
    }
  | { type: 'RemoveBot'; data: { bot_id: string } };

export const botsDecider: Decider<BotsState, BotsCommand, BotsEvent> = {
  eventTypes: { BotConfigured: true, BotRemoved: true },

  initialState: () => ({ bots: {} }),

  evolve(state, event) {
    switch (event.type) {
      case 'BotConfigured':
        return { bots: { ...state.bots, [event.data.bot_id]: event.data } };
      case 'BotRemoved': {
        const { [event.data.bot_id]: _gone, ...rest } = state.bots;
        return { bots: rest };
      }
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'SaveBot': {
        const { bot_id, settings, api_key } = command.data;
        const current = state.bots[bot_id];
        if (!current && Object.keys(state.bots).length >= MAX_BOTS) throw conflict(`an instance has at most ${MAX_BOTS} bots; remove one first`);
        if (current && current.settings.kind !== settings.kind) throw invalidInput('kind', `bot ${bot_id} is a ${current.settings.kind} bot; remove it to make it another kind`);
        const key = api_key === undefined ? (current ? { sealed: current.api_key_sealed, masked: current.api_key_masked } : { sealed: null, masked: null }) : { sealed: api_key?.sealed ?? null, masked: api_key?.masked ?? null };
        const next: BotConfiguredData = { bot_id, settings, api_key_sealed: key.sealed, api_key_masked: key.masked };
        if (current && JSON.stringify(current) === JSON.stringify(next)) return [];
        return [{ type: 'BotConfigured', data: next }];
      }
      case 'RemoveBot':
        if (!state.bots[command.data.bot_id]) throw notFound(`no bot ${command.data.bot_id} on this instance`);
        return [{ type: 'BotRemoved', data: { bot_id: command.data.bot_id } }];
    }
  },
};
