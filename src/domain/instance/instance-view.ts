import type { SessionEvent } from '../session/events.js';
import { sessionStatusChange } from '../session/session-status.js';
import type { InstanceEvent } from './events.js';

/** The Instance as clients read it, with what auth needs (hashes, the sealed secret). */
export interface InstanceView {
  account_id: string;
  name: string;
  token_hash: string;
  webhook: string;
  events_subscribe: string[];
  webhook_secret_sealed: string;
  reject_calls: boolean;
  auto_read_messages: boolean;
  connected: boolean;
  connected_at: string | null;
  whatsapp_push_name: string | null;
  whatsapp_jid: string | null;
  phone: string | null;
  billing_status: string;
  created_at: string;
  updated_at: string;
  cancel_at: string | null;
  expired_at: string | null;
  labels: Record<string, unknown>;
}

type ShownSessionEvent = Extract<SessionEvent, { type: 'SessionConnected' | 'SessionDisconnected' | 'SessionLoggedOut' | 'ProfileUpdated' }>;

/** Everything the Instance shows: its own stream and the session happenings it reports. */
export type InstanceViewEvent = InstanceEvent | ShownSessionEvent;

export const INSTANCE_VIEW_EVENT_TYPES: ReadonlySet<string> = new Set([
  'InstanceCreated',
  'InstanceUpdated',
  'WebhookConfigured',
  'WebhookCleared',
  'WebhookSecretRotated',
  'InstanceTokenRotated',
  'InstanceCanceled',
  'SubscriptionStarted',
  'SubscriptionRenewed',
  'SubscriptionCancellationScheduled',
  'SubscriptionResumed',
  'PaymentFailed',
  'TrialExpired',
  'SubscriptionExpired',
  'SessionConnected',
  'SessionDisconnected',
  'SessionLoggedOut',
  'ProfileUpdated',
] satisfies InstanceViewEvent['type'][]);

/**
 * What one event does to the view: creates it whole, or sets some fields. Every change depends
 * on the event alone, so the projection can write it as a patch without reading the document,
 * and a fold over the log (the state at a time) gets the same view.
 */
export type InstanceViewChange = { created: InstanceView } | { set: Partial<InstanceView> } | null;

export function instanceViewChange(event: InstanceViewEvent, occurredAt: string): InstanceViewChange {
  // A change to the instance itself moves updated_at; what its session does does not.
  const touch = (fields: Partial<InstanceView>) => ({ set: { ...fields, updated_at: occurredAt } });
  switch (event.type) {
    case 'InstanceCreated': {
      const d = event.data;
      return {
        created: {
          account_id: d.account_id,
          name: d.name,
          token_hash: d.token_hash,
          webhook: '',
          events_subscribe: [],
          webhook_secret_sealed: d.webhook_secret_sealed,
          reject_calls: d.reject_calls,
          auto_read_messages: d.auto_read_messages,
          connected: false,
          connected_at: null,
          whatsapp_push_name: null,
          whatsapp_jid: null,
          phone: null,
          billing_status: d.billing_status,
          created_at: occurredAt,
          updated_at: occurredAt,
          cancel_at: null,
          expired_at: d.expired_at,
          labels: d.labels,
        },
      };
    }
    case 'InstanceUpdated':
      return touch(event.data);
    case 'WebhookConfigured':
      return touch({ webhook: event.data.url, events_subscribe: event.data.events });
    case 'WebhookCleared':
      return touch({ webhook: '', events_subscribe: [] });
    case 'WebhookSecretRotated':
      return touch({ webhook_secret_sealed: event.data.webhook_secret_sealed });
    case 'InstanceTokenRotated':
      return touch({ token_hash: event.data.token_hash });
    // The export is not part of the Instance (GET /instances/{id}/export shows it).
    case 'ExportConfigured':
    case 'ExportCleared':
      return null;
    case 'SubscriptionStarted':
      return touch({ billing_status: 'ACTIVE', expired_at: event.data.expired_at, cancel_at: null });
    case 'SubscriptionRenewed':
      return touch({ billing_status: 'ACTIVE', expired_at: event.data.expired_at });
    case 'SubscriptionCancellationScheduled':
      return touch({ cancel_at: event.data.cancel_at });
    case 'SubscriptionResumed':
      return touch({ cancel_at: null });
    case 'PaymentFailed':
      return touch({ billing_status: 'PAST_DUE' });
    case 'TrialExpired':
    case 'SubscriptionExpired':
      return touch({ billing_status: 'EXPIRED' });
    case 'InstanceCanceled':
      return touch({ billing_status: 'CANCELED', cancel_at: event.data.canceled_at });
    case 'SessionConnected':
    case 'SessionDisconnected':
    case 'SessionLoggedOut':
    case 'ProfileUpdated':
      return sessionFields(event, occurredAt);
  }
}

/**
 * What a session event shows on the Instance: the session status's own change (its one fold),
 * with the Instance's names for the fields it shows, a forgotten one shown as null.
 */
function sessionFields(event: ShownSessionEvent, occurredAt: string): InstanceViewChange {
  const change = sessionStatusChange(event, occurredAt);
  if (change === null) return null;
  const { set, unset } = change;
  const shown = <K extends 'connected_at' | 'jid' | 'phone' | 'push_name'>(field: K) => (set[field] !== undefined ? set[field] : unset.includes(field) ? null : undefined);
  const fields: Partial<InstanceView> = {};
  if (set.connected !== undefined) fields.connected = set.connected;
  const connectedAt = shown('connected_at');
  if (connectedAt !== undefined) fields.connected_at = connectedAt;
  const jid = shown('jid');
  if (jid !== undefined) fields.whatsapp_jid = jid;
  const phone = shown('phone');
  if (phone !== undefined) fields.phone = phone;
  const pushName = shown('push_name');
  if (pushName !== undefined) fields.whatsapp_push_name = pushName;
  return Object.keys(fields).length === 0 ? null : { set: fields };
}

/** The fold: null until the instance exists; events before its creation change nothing. */
export function evolveInstanceView(view: InstanceView | null, event: InstanceViewEvent, occurredAt: string): InstanceView | null {
  const change = instanceViewChange(event, occurredAt);
  if (change === null) return view;
  if ('created' in change) return change.created;
  return view === null ? null : { ...view, ...change.set };
}
