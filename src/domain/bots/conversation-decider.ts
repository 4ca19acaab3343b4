import type { Decider } from '../decider.js';
import { conflict, notFound } from '../errors.js';
import type { BotAnswer, BotConversationEvent } from './events.js';

export type ConversationStatus = 'none' | 'active' | 'paused' | 'ended';

export interface ConversationState {
  status: ConversationStatus;
  /** When the last event happened (ms): inactivity counts from here. */
  last_ms: number;
  bot_session: string | null;
  /** What the bot's last answer offered to choose from. */
  choices: string[];
  /** The last messages answered, with their answers: a message is answered once, whatever crashes. */
  answered: { message_id: string; answers: BotAnswer[] }[];
  /** The conversation so far, newest last (the context an assistant is given). */
  history: { role: 'user' | 'assistant'; content: string }[];
}

const ANSWERED_KEPT = 50;
const HISTORY_KEPT = 100;

/** A contact's message as the runner sees it, with what the bot's settings make of it. */
export interface Incoming {
  message_id: string;
  text: string;
  at_ms: number;
  expire_ms: number;
  /** The bot's trigger matches this message. */
  triggered: boolean;
  /** The bot's stop keyword, if any. */
  stop_keyword: string | null;
}

/** What the runner does with a message, decided from the conversation alone. */
export type Step =
  | { kind: 'answered'; answers: BotAnswer[] }
  | { kind: 'start' }
  | { kind: 'continue'; bot_session: string | null; choices: string[] }
  | { kind: 'stop' }
  | { kind: 'ignore'; reason: string };

const isStop = (text: string, keyword: string | null) => keyword !== null && keyword.trim() !== '' && text.trim().toLowerCase() === keyword.trim().toLowerCase();

/** An active or paused conversation idle this long has ended, whether or not its expiry is recorded yet. */
export const idle = (state: ConversationState, atMs: number, expireMs: number) => (state.status === 'active' || state.status === 'paused') && atMs - state.last_ms >= expireMs;

export function nextStep(state: ConversationState, m: Incoming): Step {
  const done = state.answered.find((a) => a.message_id === m.message_id);
  if (done) return { kind: 'answered', answers: done.answers };
  const live = !idle(state, m.at_ms, m.expire_ms) && (state.status === 'active' || state.status === 'paused');
  if (live && isStop(m.text, m.stop_keyword)) return { kind: 'stop' };
  if (live && state.status === 'paused') return { kind: 'ignore', reason: 'the conversation is paused (a person took over)' };
  if (live) return { kind: 'continue', bot_session: state.bot_session, choices: state.choices };
  if (isStop(m.text, m.stop_keyword)) return { kind: 'ignore', reason: 'the stop keyword, with no conversation going on' };
  return m.triggered ? { kind: 'start' } : { kind: 'ignore', reason: 'the trigger does not match' };
}

type Key = { bot_id: string; jid: string };

export type ConversationCommand =
  | { type: 'Answer'; data: Key & { incoming: Incoming; answers: BotAnswer[]; bot_session: string | null; choices: string[] } }
  | { type: 'Stop'; data: Key & { incoming: Incoming } }
  | { type: 'Pause'; data: Key & { by: 'human' | 'operator'; message_id: string | null; at_ms: number; expire_ms: number } }
  | { type: 'Resume'; data: Key & { at_ms: number; expire_ms: number } }
  | { type: 'Expire'; data: Key & { at_ms: number; expire_ms: number } }
  | { type: 'ReportFailure'; data: Key & { message_id: string; attempt: number; error: string; gave_up: boolean; at_ms: number } };

const iso = (ms: number) => new Date(ms).toISOString();

function expiry(state: ConversationState, key: Key, atMs: number, expireMs: number): BotConversationEvent[] {
  return idle(state, atMs, expireMs) ? [{ type: 'BotConversationExpired', data: { ...key, at: iso(atMs), idle_minutes: Math.floor((atMs - state.last_ms) / 60_000) } }] : [];
}

/**
 * One bot's conversation with one contact: started by a message that triggers the bot, one
 * exchange per message answered, paused when a person answers instead (or an operator says so),
 * ended by inactivity or the stop keyword. Pure: the time comes in the command.
 */
export const conversationDecider: Decider<ConversationState, ConversationCommand, BotConversationEvent> = {
  eventTypes: {
    BotConversationStarted: true,
    BotExchanged: true,
    BotConversationPaused: true,
    BotConversationResumed: true,
    BotConversationExpired: true,
    BotConversationStopped: true,
    BotServerFailed: true,
  },

  initialState: () => ({ status: 'none', last_ms: 0, bot_session: null, choices: [], answered: [], history: [] }),

  evolve(state, event) {
    const at = Date.parse(event.data.at);
    switch (event.type) {
      case 'BotConversationStarted':
        return { ...state, status: 'active', last_ms: at, bot_session: null, choices: [], history: [] };
      case 'BotExchanged': {
        const { message_id, answers, text, bot_session, choices } = event.data;
        const said = answers.map((a) => ({ role: 'assistant' as const, content: a.text }));
        return {
          ...state,
          last_ms: at,
          bot_session,
          choices,
          answered: [...state.answered, { message_id, answers }].slice(-ANSWERED_KEPT),
          history: [...state.history, { role: 'user' as const, content: text }, ...said].slice(-HISTORY_KEPT),
        };
      }
      case 'BotConversationPaused':
        return { ...state, status: 'paused', last_ms: at };
      case 'BotConversationResumed':
        return { ...state, status: 'active', last_ms: at };
      case 'BotConversationExpired':
      case 'BotConversationStopped':
        return { ...state, status: 'ended', bot_session: null, choices: [] };
      case 'BotServerFailed':
        return state;
    }
  },

  decide(command, state) {
    const key = { bot_id: command.data.bot_id, jid: command.data.jid };
    switch (command.type) {
      case 'Answer': {
        const { incoming, answers, bot_session, choices } = command.data;
        const step = nextStep(state, incoming);
        if (step.kind === 'answered') return [];
        if (step.kind === 'ignore' || step.kind === 'stop') throw conflict(`the conversation changed meanwhile: ${step.kind === 'stop' ? 'stopped' : step.reason}`);
        const at = iso(incoming.at_ms);
        const before: BotConversationEvent[] =
          step.kind === 'start'
            ? [...expiry(state, key, incoming.at_ms, incoming.expire_ms), { type: 'BotConversationStarted', data: { ...key, at, message_id: incoming.message_id } }]
            : [];
        return [...before, { type: 'BotExchanged', data: { ...key, at, message_id: incoming.message_id, text: incoming.text, answers, bot_session, choices } }];
      }
      case 'Stop': {
        const { incoming } = command.data;
        if (nextStep(state, incoming).kind !== 'stop') return [];
        return [{ type: 'BotConversationStopped', data: { ...key, at: iso(incoming.at_ms), message_id: incoming.message_id, reason: 'keyword' } }];
      }
      case 'Pause': {
        const { at_ms, expire_ms, by, message_id } = command.data;
        const ended = expiry(state, key, at_ms, expire_ms);
        if (ended.length > 0 || state.status !== 'active') {
          if (by === 'operator' && state.status !== 'paused' && ended.length === 0) throw notFound('no conversation going on with this contact');
          return ended;
        }
        return [{ type: 'BotConversationPaused', data: { ...key, at: iso(at_ms), by, message_id } }];
      }
      case 'Resume': {
        const { at_ms, expire_ms } = command.data;
        if (state.status === 'active') return [];
        if (state.status !== 'paused') throw notFound('no paused conversation with this contact');
        // A conversation paused past its expiry is over: a resume does not bring it back.
        const ended = expiry(state, key, at_ms, expire_ms);
        if (ended.length > 0) return ended;
        return [{ type: 'BotConversationResumed', data: { ...key, at: iso(at_ms) } }];
      }
      case 'Expire':
        return expiry(state, key, command.data.at_ms, command.data.expire_ms);
      case 'ReportFailure': {
        const { message_id, attempt, error, gave_up, at_ms } = command.data;
        return [{ type: 'BotServerFailed', data: { ...key, at: iso(at_ms), message_id, attempt, error: error.slice(0, 500), gave_up } }];
      }
    }
  },
};
