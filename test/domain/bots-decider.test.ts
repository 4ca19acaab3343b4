import { botsDecider, MAX_BOTS, type BotsCommand } from '../../src/domain/bots/bots-decider.js';
import { conversationDecider, nextStep, type ConversationCommand, type Incoming } from '../../src/domain/bots/conversation-decider.js';
import type { BotConversationEvent, BotSettings, BotsEvent } from '../../src/domain/bots/events.js';
import { expect } from 'chai';
import { deciderSpec } from '../support/decider-spec.js';

const settings: BotSettings = {
  kind: 'openai',
  enabled: true,
  trigger: { type: 'all' },
  scope: 'contacts',
  ignore_jids: [],
  expire_minutes: 10,
  stop_keyword: 'stop',
  pause_on_human: true,
  delay_ms: 0,
  url: 'https://llm.example/v1',
  model: 'm',
  system_prompt: '',
  max_history: 10,
};

describe('bots decider: an instance’s bots', () => {
  const spec = deciderSpec(botsDecider);
  const save = (bot_id: string, api_key?: { sealed: string; masked: string } | null, s = settings): BotsCommand => ({ type: 'SaveBot', data: { bot_id, settings: s, ...(api_key === undefined ? {} : { api_key }) } });
  const configured = (bot_id: string, sealed: string | null, masked: string | null, s = settings): BotsEvent => ({ type: 'BotConfigured', data: { bot_id, settings: s, api_key_sealed: sealed, api_key_masked: masked } });

  it('records a new bot with its key sealed', () => spec.given([]).when(save('b1', { sealed: 'S', masked: 'M' })).then([configured('b1', 'S', 'M')]));
  it('keeps the key when a save omits it', () =>
    spec.given([configured('b1', 'S', 'M')]).when(save('b1', undefined, { ...settings, delay_ms: 500 })).then([configured('b1', 'S', 'M', { ...settings, delay_ms: 500 })]));
  it('removes the key when a save says null', () => spec.given([configured('b1', 'S', 'M')]).when(save('b1', null)).then([configured('b1', null, null)]));
  it('records nothing for the same settings again', () => spec.given([configured('b1', 'S', 'M')]).when(save('b1')).thenNothingHappened());
  it('refuses another kind under the same id', () => spec.given([configured('b1', 'S', 'M')]).when(save('b1', undefined, { ...settings, kind: 'typebot' })).thenThrows('invalid_input'));
  it(`refuses a bot beyond ${MAX_BOTS}`, () =>
    spec.given(Array.from({ length: MAX_BOTS }, (_, i) => configured(`b${i}`, null, null))).when(save('one-more')).thenThrows('conflict'));
  it('removes a bot, and refuses to remove one that is not there', () => {
    spec.given([configured('b1', null, null)]).when({ type: 'RemoveBot', data: { bot_id: 'b1' } }).then([{ type: 'BotRemoved', data: { bot_id: 'b1' } }]);
    spec.given([]).when({ type: 'RemoveBot', data: { bot_id: 'b1' } }).thenThrows('not_found');
  });
});

describe('conversation decider: one bot, one contact', () => {
  const spec = deciderSpec(conversationDecider);
  const key = { bot_id: 'b1', jid: '5511@s.whatsapp.net' };
  const T0 = Date.parse('2026-11-28T10:00:00.000Z');
  const iso = (ms: number) => new Date(ms).toISOString();
  const incoming = (message_id: string, text: string, at_ms = T0, triggered = true): Incoming => ({ message_id, text, at_ms, expire_ms: 10 * 60_000, triggered, stop_keyword: 'stop' });
  const answer = (m: Incoming, reply = 'hi'): ConversationCommand => ({ type: 'Answer', data: { ...key, incoming: m, answers: [{ message_id: `A-${m.message_id}`, kind: 'text', text: reply }], bot_session: 'S1', choices: [] } });
  const started = (message_id: string, at = T0): BotConversationEvent => ({ type: 'BotConversationStarted', data: { ...key, at: iso(at), message_id } });
  const exchanged = (message_id: string, text: string, at = T0, reply = 'hi'): BotConversationEvent => ({
    type: 'BotExchanged',
    data: { ...key, at: iso(at), message_id, text, answers: [{ message_id: `A-${message_id}`, kind: 'text', text: reply }], bot_session: 'S1', choices: [] },
  });
  const paused: BotConversationEvent = { type: 'BotConversationPaused', data: { ...key, at: iso(T0 + 1000), by: 'human', message_id: 'H1' } };

  it('starts a conversation with a triggering message and records the exchange', () => spec.given([]).when(answer(incoming('m1', 'hello'))).then([started('m1'), exchanged('m1', 'hello')]));
  it('continues a live conversation without starting another', () => spec.given([started('m1'), exchanged('m1', 'hello')]).when(answer(incoming('m2', 'more', T0 + 60_000))).then([exchanged('m2', 'more', T0 + 60_000)]));
  it('never answers a message twice (a repeat after a crash records nothing)', () => spec.given([started('m1'), exchanged('m1', 'hello')]).when(answer(incoming('m1', 'hello'))).thenNothingHappened());
  it('ends an idle conversation before starting a new one', () =>
    spec
      .given([started('m1'), exchanged('m1', 'hello')])
      .when(answer(incoming('m2', 'back', T0 + 11 * 60_000)))
      .then([{ type: 'BotConversationExpired', data: { ...key, at: iso(T0 + 11 * 60_000), idle_minutes: 11 } }, started('m2', T0 + 11 * 60_000), exchanged('m2', 'back', T0 + 11 * 60_000)]));
  it('refuses to answer while a person has taken over', () => spec.given([started('m1'), exchanged('m1', 'hello'), paused]).when(answer(incoming('m2', 'x', T0 + 2000))).thenThrows('conflict'));
  it('pauses a live conversation when a person answers, and resumes it for the operator', () => {
    spec.given([started('m1')]).when({ type: 'Pause', data: { ...key, by: 'human', message_id: 'H1', at_ms: T0 + 1000, expire_ms: 600_000 } }).then([paused]);
    spec.given([started('m1'), paused]).when({ type: 'Resume', data: { ...key, at_ms: T0 + 2000, expire_ms: 600_000 } }).then([{ type: 'BotConversationResumed', data: { ...key, at: iso(T0 + 2000) } }]);
  });
  it('a person answering with no conversation going on pauses nothing; an operator is told 404', () => {
    spec.given([]).when({ type: 'Pause', data: { ...key, by: 'human', message_id: 'H1', at_ms: T0, expire_ms: 600_000 } }).thenNothingHappened();
    spec.given([]).when({ type: 'Pause', data: { ...key, by: 'operator', message_id: null, at_ms: T0, expire_ms: 600_000 } }).thenThrows('not_found');
  });
  it('stops on the stop keyword, paused or not', () =>
    spec.given([started('m1'), paused]).when({ type: 'Stop', data: { ...key, incoming: incoming('m3', ' STOP ', T0 + 3000) } }).then([{ type: 'BotConversationStopped', data: { ...key, at: iso(T0 + 3000), message_id: 'm3', reason: 'keyword' } }]));
  it('expires an idle conversation, and not a fresh one', () => {
    spec.given([started('m1')]).when({ type: 'Expire', data: { ...key, at_ms: T0 + 5 * 60_000, expire_ms: 600_000 } }).thenNothingHappened();
    spec.given([started('m1')]).when({ type: 'Expire', data: { ...key, at_ms: T0 + 10 * 60_000, expire_ms: 600_000 } }).then([{ type: 'BotConversationExpired', data: { ...key, at: iso(T0 + 10 * 60_000), idle_minutes: 10 } }]);
  });
  it('records a failing server, its error cut short', () =>
    spec.given([]).when({ type: 'ReportFailure', data: { ...key, message_id: 'm1', attempt: 1, error: 'x'.repeat(900), gave_up: false, at_ms: T0 } }).then([
      { type: 'BotServerFailed', data: { ...key, at: iso(T0), message_id: 'm1', attempt: 1, error: 'x'.repeat(500), gave_up: false } },
    ]));
  it('tells the runner what to do with a message', () => {
    const state = [started('m1'), exchanged('m1', 'hello')].reduce(conversationDecider.evolve, conversationDecider.initialState());
    expect(nextStep(conversationDecider.initialState(), incoming('m9', 'nope', T0, false))).to.deep.equal({ kind: 'ignore', reason: 'the trigger does not match' });
    expect(nextStep(state, incoming('m2', 'go on', T0 + 1000, false))).to.deep.equal({ kind: 'continue', bot_session: 'S1', choices: [] });
    expect(nextStep(state, incoming('m1', 'hello')).kind).to.equal('answered');
    expect(state.history).to.deep.equal([{ role: 'user', content: 'hello' }, { role: 'assistant', content: 'hi' }]);
  });
});
