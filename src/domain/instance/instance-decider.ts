import type { Decider } from '../decider.js';
import { conflict, notFound } from '../errors.js';
import type { WebhookEventName } from '../events-table.js';
import { BILLING_COMMANDS, decideBilling, evolveBilling, isLapsed, NO_BILLING, paymentRequired, type BillingCommand, type BillingState } from './billing.js';
import { InstanceEventSchemas, type InstanceEvent } from './events.js';

export interface InstanceState {
  exists: boolean;
  billing: BillingState;
  accountId: string;
  name: string;
  rejectCalls: boolean;
  autoReadMessages: boolean;
  /** `url` '' means no webhook; events may be chosen before a URL is. */
  webhook: { url: string; events: WebhookEventName[] };
  /** Event types exported to the brokers; empty: no export. */
  exportEvents: WebhookEventName[];
}

/** Webhook settings as a command carries them: `url` '' clears, `events` undefined keeps. */
export interface WebhookChange {
  url?: string;
  events?: WebhookEventName[];
}

export type InstanceCommand =
  | {
      type: 'CreateInstance';
      data: {
        instance_id: string;
        account_id: string;
        name: string;
        token_hash: string;
        webhook_secret_sealed: string;
        reject_calls: boolean;
        auto_read_messages: boolean;
        labels: Record<string, unknown>;
        expired_at: string;
        webhook: WebhookChange;
      };
    }
  | {
      type: 'UpdateInstance';
      data: { name: string; reject_calls?: boolean; auto_read_messages?: boolean; webhook: WebhookChange };
    }
  | { type: 'ConfigureWebhook'; data: WebhookChange }
  | { type: 'ConfigureExport'; data: { events: WebhookEventName[] } }
  | { type: 'ClearExport'; data: Record<string, never> }
  | { type: 'RotateInstanceToken'; data: { token_hash: string } }
  | { type: 'RotateWebhookSecret'; data: { webhook_secret_sealed: string } }
  | BillingCommand;

const NO_WEBHOOK: InstanceState['webhook'] = { url: '', events: [] };

const initialState = (): InstanceState => ({
  exists: false,
  billing: NO_BILLING,
  accountId: '',
  name: '',
  rejectCalls: false,
  autoReadMessages: false,
  webhook: NO_WEBHOOK,
  exportEvents: [],
});

function evolve(state: InstanceState, event: InstanceEvent): InstanceState {
  const billing = evolveBilling(state.billing, event);
  const next = billing === state.billing ? state : { ...state, billing };
  return evolveSettings(next, event);
}

function evolveSettings(state: InstanceState, event: InstanceEvent): InstanceState {
  switch (event.type) {
    case 'InstanceCreated':
      return {
        exists: true,
        billing: state.billing,
        accountId: event.data.account_id,
        name: event.data.name,
        rejectCalls: event.data.reject_calls,
        autoReadMessages: event.data.auto_read_messages,
        webhook: NO_WEBHOOK,
        exportEvents: [],
      };
    case 'InstanceUpdated':
      return {
        ...state,
        name: event.data.name ?? state.name,
        rejectCalls: event.data.reject_calls ?? state.rejectCalls,
        autoReadMessages: event.data.auto_read_messages ?? state.autoReadMessages,
      };
    case 'WebhookConfigured':
      return { ...state, webhook: { url: event.data.url, events: event.data.events } };
    case 'WebhookCleared':
      return { ...state, webhook: NO_WEBHOOK };
    case 'ExportConfigured':
      return { ...state, exportEvents: event.data.events };
    case 'ExportCleared':
      return { ...state, exportEvents: [] };
    default:
      return state;
  }
}

/** An empty URL with no events named clears the whole configuration; omitted parts stay. */
function webhookEvents(state: InstanceState, change: WebhookChange): InstanceEvent[] {
  const url = change.url ?? state.webhook.url;
  const events = change.events ?? (change.url === '' ? [] : state.webhook.events);
  if (url === state.webhook.url && sameList(events, state.webhook.events)) return [];
  if (url === '' && events.length === 0) return [{ type: 'WebhookCleared', data: {} }];
  return [{ type: 'WebhookConfigured', data: { url, events } }];
}

const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

function requireExisting(state: InstanceState): void {
  if (!state.exists) throw notFound('instance not found');
}

/** Settings that make the instance act (name, webhook) change only while it runs. */
function requireRunning(state: InstanceState): void {
  requireExisting(state);
  if (isLapsed(state.billing.status)) throw paymentRequired();
}

const isBilling = (command: InstanceCommand): command is BillingCommand => BILLING_COMMANDS.has(command.type);

function decide(command: InstanceCommand, state: InstanceState): InstanceEvent[] {
  if (isBilling(command)) {
    requireExisting(state);
    return decideBilling(command, state.billing);
  }
  switch (command.type) {
    case 'CreateInstance': {
      if (state.exists) throw conflict('instance exists');
      const { webhook, ...data } = command.data;
      const created: InstanceEvent = { type: 'InstanceCreated', data: { ...data, billing_status: 'TRIALING' } };
      return [created, ...webhookEvents(evolve(state, created), webhook)];
    }
    case 'UpdateInstance': {
      requireRunning(state);
      const { name, reject_calls, auto_read_messages, webhook } = command.data;
      const changed: { name?: string; reject_calls?: boolean; auto_read_messages?: boolean } = {};
      if (name !== state.name) changed.name = name;
      if (reject_calls !== undefined && reject_calls !== state.rejectCalls) changed.reject_calls = reject_calls;
      if (auto_read_messages !== undefined && auto_read_messages !== state.autoReadMessages) {
        changed.auto_read_messages = auto_read_messages;
      }
      const updated: InstanceEvent[] = Object.keys(changed).length > 0 ? [{ type: 'InstanceUpdated', data: changed }] : [];
      return [...updated, ...webhookEvents(state, webhook)];
    }
    case 'ConfigureWebhook':
      requireRunning(state);
      return webhookEvents(state, command.data);
    case 'ConfigureExport':
      requireRunning(state);
      // The same list again changes nothing and records nothing.
      return sameList(command.data.events, state.exportEvents) ? [] : [{ type: 'ExportConfigured', data: { events: command.data.events } }];
    case 'ClearExport':
      requireRunning(state);
      return state.exportEvents.length === 0 ? [] : [{ type: 'ExportCleared', data: {} }];
    case 'RotateInstanceToken':
      requireExisting(state);
      if (state.billing.status === 'CANCELED') throw conflict('instance is canceled');
      return [{ type: 'InstanceTokenRotated', data: command.data }];
    case 'RotateWebhookSecret':
      requireRunning(state);
      return [{ type: 'WebhookSecretRotated', data: command.data }];
  }
}

export const instanceDecider: Decider<InstanceState, InstanceCommand, InstanceEvent> = {
  eventTypes: InstanceEventSchemas,
  initialState,
  evolve,
  decide,
};
