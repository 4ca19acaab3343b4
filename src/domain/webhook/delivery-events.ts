import { Type, type Static } from '@sinclair/typebox';

/** A webhook's final outcomes, per instance: what statistics count and history shows. */
export const webhookStream = (instanceId: string) => `webhook-${instanceId}`;

const Outcome = {
  delivery_id: Type.String(),
  /** The stored event the delivery carried. */
  event_id: Type.String(),
  attempts: Type.Integer({ minimum: 0 }),
  status_code: Type.Union([Type.Integer(), Type.Null()]),
  /** From the event's time to the outcome: what a receiver waited, retries included. */
  latency_ms: Type.Integer({ minimum: 0 }),
};

const WebhookDelivered = Type.Object(Outcome);
const WebhookDeliveryFailed = Type.Object({ ...Outcome, error: Type.Union([Type.String(), Type.Null()]) });

export const WebhookDeliveryEventSchemas = { WebhookDelivered, WebhookDeliveryFailed } as const;

export type WebhookDeliveryEvent =
  | { type: 'WebhookDelivered'; data: Static<typeof WebhookDelivered> }
  | { type: 'WebhookDeliveryFailed'; data: Static<typeof WebhookDeliveryFailed> };
