import type { ClaimFields } from '../../infra/doc-claims.js';
import type { Document, DocumentStore } from '../../infra/docstore/port.js';
import type { WebhookType } from '../bodies/schemas.js';

/** The delivery log: one document per (event, webhook), written by the reactor, moved by the dispatcher. */
export const DELIVERIES = 'webhook_deliveries';
/** The reactor's own fold of each instance's webhook settings, at the log position it has reached. */
export const HOOKS = 'webhook_hooks';

/**
 * queued: waiting for its first attempt (in per-instance order); retrying: waiting for a later
 * attempt (any order); delivered and failed are final until someone retries by hand.
 */
export type DeliveryState = 'queued' | 'retrying' | 'delivered' | 'failed';
export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** The states nobody will attempt again on their own: what retention may remove. */
export const FINAL_STATES = ['delivered', 'failed'] as const satisfies readonly DeliveryState[];
export type FinalState = (typeof FINAL_STATES)[number];

export const statusOf = (state: DeliveryState): DeliveryStatus =>
  state === 'queued' || state === 'retrying' ? 'pending' : state;

/** With several nodes a retry carries the claim of the node attempting it (ClaimFields), until its outcome. */
export interface DeliveryDoc extends Document, ClaimFields {
  /** `evt_` + the stored event's uuid without dashes: the idempotency key and `webhook-id`. */
  _id: string;
  /** The stored event's id in the log. */
  event_id: string;
  instance_id: string;
  seq: number;
  type: WebhookType;
  /** Log position of the event: the deliveries' order across instances (for inspection; the dispatcher goes by seq). */
  pos: number;
  /** The webhook URL in force when the event happened. */
  url: string;
  /** Origin of `url`: the unit of the per-host concurrency cap and its retry queue. */
  host: string;
  /** Exactly the bytes that are signed and sent, the same on every attempt. */
  body: string;
  /** The log answers its status (statusOf). */
  state: DeliveryState;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
  next_attempt_at: string | null;
  /** When the next attempt is due (epoch ms). */
  due_ms: number;
  /**
   * `host` while retrying, null otherwise: the retry queues' index key. A delivery that succeeds
   * at its first attempt never changes this key, so its outcome does not touch that index.
   */
  retry_host: string | null;
  /** Retries stop WEBHOOK_RETRY_HORIZON_S after this (event time, or a manual retry). */
  horizon_from_ms: number;
  /** The event's correlation id (the request id of the API call that caused it): sent as X-Request-Id. */
  correlation_id?: string;
}

export interface HookDoc extends Document {
  _id: string;
  url: string;
  events: string[];
  /** Sealed with the server key (aad `webhook-secret:<id>`); opened only to sign. */
  secret_sealed: string;
  /**
   * A floor for the next seq: written with the settings and raised by the retention sweep. The
   * reactor hands out seqs past it and past every recorded delivery, which carry the later ones.
   */
  seq: number;
  /** The instance is EXPIRED or CANCELED: nothing new is delivered until it subscribes again. */
  lapsed?: boolean;
}

/** `evt_` + uuid without dashes. */
export const deliveryId = (eventId: string) => `evt_${eventId.replace(/-/g, '').toLowerCase()}`;

/** Non-final states and failed: what the lanes, the retention sweep and the log's filters look up. */
export const NOT_DELIVERED = ['queued', 'retrying', 'failed'] as const satisfies readonly DeliveryState[];

/**
 * Three indexes, each earning its write cost (an index entry is most of the price of a write and
 * of the pages a commit flushes). Most deliveries go queued -> delivered at the first attempt: that
 * path adds one `log` entry and one `open` entry, and its outcome removes the `open` one.
 */
export async function ensureDeliveryIndexes(docs: DocumentStore): Promise<void> {
  const deliveries = docs.collection(DELIVERIES);
  // Layouts of earlier versions, which also indexed every delivered and every non-retrying one.
  await deliveries.dropIndex('lane');
  await deliveries.dropIndex('retry_due');
  // The delivery log route, newest first, and the retention sweep, oldest first. Its key never
  // changes after the insert.
  await deliveries.createIndex({ name: 'log', keys: { instance_id: 1, seq: -1 } });
  // First attempts (one instance's queued deliveries in seq order) and the log's pending and
  // failed filters; delivered ones leave it.
  await deliveries.createIndex({
    name: 'open',
    keys: { instance_id: 1, state: 1, seq: 1 },
    partialFilterExpression: { state: { $in: [...NOT_DELIVERED] } },
  });
  // Retries: one host's retrying deliveries by due time; nothing else has a retry_host.
  await deliveries.createIndex({
    name: 'retry_queue',
    keys: { retry_host: 1, due_ms: 1 },
    partialFilterExpression: { retry_host: { $type: 'string' } },
  });
}

/** The internal states behind each status of the delivery log. */
export const STATES_OF: Record<DeliveryStatus, DeliveryState[]> = {
  pending: ['queued', 'retrying'],
  delivered: ['delivered'],
  failed: ['failed'],
};
