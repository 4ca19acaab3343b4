import type { RecordedEvent } from '../../domain/recorded.js';
import { occurredAt } from '../../projections/projection.js';
import { deliveryId } from '../deliveries/documents.js';
import { renderEvent } from './render.js';
import type { WebhookType } from './schemas.js';

/**
 * The body CONTRACT.md's Webhooks section gives a stored event, `{id, type, instance_id, seq,
 * created_at, event, state?}`, for every channel that delivers events (webhooks, the realtime
 * stream); each channel numbers its own `seq`. Null for an event that is not delivered.
 */
export function eventBody(event: RecordedEvent, instanceId: string, seq: number): { type: WebhookType; body: string } | null {
  const webhook = renderEvent(event);
  if (!webhook) return null;
  const { type, rendered } = webhook;
  const state = 'state' in rendered ? { state: rendered.state } : {};
  const body = JSON.stringify({ id: deliveryId(event.id), type, instance_id: instanceId, seq, created_at: occurredAt(event), event: rendered.event, ...state });
  return { type, body };
}
