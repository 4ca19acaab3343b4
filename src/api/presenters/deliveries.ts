import type { Static } from '@sinclair/typebox';
import { statusOf, type DeliveryDoc } from '../../webhooks/deliveries/documents.js';
import type { Delivery } from '../schemas/webhook-deliveries.js';

/** A delivery as CONTRACT.md's Webhooks section lists it, fields in its order. */
export function presentDelivery(d: DeliveryDoc): Static<typeof Delivery> {
  return {
    id: d._id,
    event_id: d.event_id,
    type: d.type,
    status: statusOf(d.state),
    attempts: d.attempts,
    last_status_code: d.last_status_code,
    last_error: d.last_error,
    created_at: d.created_at,
    delivered_at: d.delivered_at,
    next_attempt_at: d.next_attempt_at,
  };
}
