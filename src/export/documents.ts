import type { Document, DocumentStore } from '../infra/docstore/port.js';
import type { WebhookType } from '../webhooks/bodies/schemas.js';

/** The export reactor's fold of each instance's export settings, at the log position it has reached. */
export const EXPORT_SETTINGS = 'export_settings';
/** Bodies waiting to be published: one per exported event, in `seq` order per instance, removed once every sink has it. */
export const EXPORT_OUTBOX = 'export_outbox';
/** How far each sink has published each instance's outbox (`<sink>:<instance_id>`). */
export const EXPORT_CURSORS = 'export_cursors';

export type SinkKind = 'amqp' | 'nats';

export interface ExportSettingsDoc extends Document {
  _id: string;
  /** Event types exported; empty: the export is off. */
  events: string[];
  /** The instance's webhook signing secret, sealed as in the log: the messages carry the webhook signature. */
  secret_sealed: string;
  /** EXPIRED or CANCELED: nothing new is exported until it subscribes again. */
  lapsed?: boolean;
  /** A floor for the next seq, written with the settings; the outbox and the cursors carry later ones. */
  seq: number;
}

/** One exported event: the webhook body, byte for byte, and what a message names it by. */
export interface OutboxDoc extends Document {
  /** The body's `id` (`evt_...`): the message id, `webhook-id` and `Nats-Msg-Id`. */
  _id: string;
  instance_id: string;
  seq: number;
  type: WebhookType;
  body: string;
  /** When the event happened (epoch ms), for the publish latency. */
  at_ms: number;
}

export interface CursorDoc extends Document {
  _id: string;
  sink: SinkKind;
  instance_id: string;
  /** The highest seq this sink has published (its broker confirmed it); every lower one is published too. */
  published_seq: number;
  published_at: string | null;
  /** The last failure, kept until a publish succeeds again; never a credential. */
  last_error: string | null;
  last_error_at: string | null;
  /** Events this sink's broker refused for good and the lane passed over, and the last one's reason. */
  skipped?: number;
  last_skipped?: string;
  last_skipped_at?: string;
}

export const cursorId = (sink: SinkKind, instanceId: string) => `${sink}:${instanceId}`;

export async function ensureExportIndexes(docs: DocumentStore): Promise<void> {
  await docs.collection(EXPORT_OUTBOX).createIndex({ name: 'lane', keys: { instance_id: 1, seq: 1 } });
  await docs.collection(EXPORT_CURSORS).createIndex({ name: 'instance', keys: { instance_id: 1 } });
}
