import { Type } from '@sinclair/typebox';
import { WEBHOOK_EVENT_NAMES } from '../../domain/events-table.js';
import { Envelope, Nullable } from './common.js';

const DeliveryStatus = Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]);

export const DeliveriesQuery = Type.Object(
  {
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
    page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
    status: Type.Optional(DeliveryStatus),
  },
  { additionalProperties: false },
);

export const DeliveryParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64 }),
  deliveryId: Type.String({ minLength: 1, maxLength: 64, description: 'evt_... as in the delivery body and the webhook-id header' }),
});

const DateTime = Type.String({ format: 'date-time' });

export const Delivery = Type.Object({
  id: Type.String({ description: 'evt_...: the body id, the webhook-id header and the idempotency key' }),
  event_id: Type.String({ description: 'id of the stored event in the log' }),
  type: Type.Union(WEBHOOK_EVENT_NAMES.filter((n) => n !== 'All').map((n) => Type.Literal(n))),
  status: DeliveryStatus,
  attempts: Type.Integer({ minimum: 0 }),
  last_status_code: Nullable(Type.Integer()),
  last_error: Nullable(Type.String()),
  created_at: DateTime,
  delivered_at: Nullable(DateTime),
  next_attempt_at: Nullable(DateTime),
});

export const DeliveryPage = Type.Object({
  page: Type.Integer(),
  page_size: Type.Integer(),
  total: Type.Integer(),
  total_pages: Type.Integer(),
  content: Type.Array(Delivery),
});

export const RetryAnswer = Envelope(Type.Object({ status: DeliveryStatus }));
