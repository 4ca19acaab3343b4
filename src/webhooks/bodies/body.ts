import type { RecordedEvent } from '../../domain/recorded.js';
import { occurredAt } from '../../projections/projection.js';
import { deliveryId } from '../deliveries/documents.js';
import { renderEvent } from './render.js';
import type { WebhookType } from './schemas.js';

/**
 * The body CONTRACT.md's Webhooks section gives a stored event, `{id, type, instance_id, seq,
 * created_at, event, state?}`, for every channel that delivers events (webhooks, the realtime
 * stream, the export), with the same `seq` on every channel (eventSeq). Null for an event that is
 * not delivered.
 */
export function eventBody(event: RecordedEvent, instanceId: string, seq: number): EventBody | null {
  const webhook = renderEvent(event);
  if (!webhook) return null;
  const { type, rendered } = webhook;
  const id = deliveryId(event.id);
  const createdAt = occurredAt(event);
  const state = 'state' in rendered ? { state: rendered.state } : {};
  const body = JSON.stringify({ id, type, instance_id: instanceId, seq, created_at: createdAt, event: rendered.event, ...state });
  return { type, body, id, createdAt };
}

/**
 * An event's `seq`: its place in the instance's session stream (revision + 1), the instance's
 * event sequence. It never changes and every channel gives the same event the same one, so a
 * client may resume the realtime stream with the last seq its webhook saw (gaps are events the
 * channel does not carry).
 */
export function eventSeq(event: Pick<RecordedEvent, 'revision'>): number {
  return Number(event.revision) + 1;
}

/** A rendered body with the id and time it carries, which a delivery records beside it. */
export interface EventBody {
  type: WebhookType;
  body: string;
  id: string;
  createdAt: string;
}
