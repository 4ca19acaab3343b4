import { Type } from '@sinclair/typebox';
import { WebhookEventNameSchema } from '../../domain/events-table.js';
import { BILLING_STATUSES } from '../../domain/instance/billing.js';
import { Nullable } from './common.js';

const Name = Type.String({ minLength: 3, maxLength: 255 });
const WebhookUrl = Type.Union([Type.String({ format: 'uri', maxLength: 2048 }), Type.Literal('')], {
  description: 'an http(s) URL; an empty string clears the webhook',
});
const EventList = Type.String({
  pattern: '^$|^[A-Za-z]+(,[A-Za-z]+)*$',
  maxLength: 512,
  description: 'comma-separated event names without spaces',
});
const DateTime = Type.String({ format: 'date-time' });

export const CreateInstanceBody = Type.Object(
  {
    name: Name,
    webhook: Type.Optional(WebhookUrl),
    events_subscribe: Type.Optional(Type.Array(WebhookEventNameSchema, { maxItems: 16 })),
    reject_calls: Type.Optional(Type.Boolean({ default: false })),
    auto_read_messages: Type.Optional(Type.Boolean({ default: false })),
    labels: Type.Optional(Type.Record(Type.String({ maxLength: 64 }), Type.Unknown(), { maxProperties: 64 })),
  },
  { additionalProperties: false },
);

export const UpdateInstanceBody = Type.Object(
  {
    name: Name,
    webhook: Type.Optional(WebhookUrl),
    events_subscribe: Type.Optional(EventList),
    reject_calls: Type.Optional(Type.Boolean()),
    auto_read_messages: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

const SORT_FIELDS = ['name', 'created_at', 'updated_at', 'billing_status', 'connected'] as const;

export const ListInstancesBody = Type.Object(
  {
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
    size: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    filter: Type.Optional(
      Type.Object(
        {
          query: Type.Optional(Type.String({ maxLength: 255 })),
          connected: Type.Optional(Type.Boolean()),
          billing_status: Type.Optional(Type.Union(BILLING_STATUSES.map((b) => Type.Literal(b)))),
        },
        { additionalProperties: false },
      ),
    ),
    sort: Type.Optional(Type.Union(SORT_FIELDS.map((f) => Type.Literal(f)), { default: 'created_at' })),
    sortDesc: Type.Optional(Type.Boolean({ default: true })),
  },
  { additionalProperties: false },
);

/** The spec's Instance, fields in the spec's order; `token` only in the create answer. */
export const Instance = Type.Object({
  id: Type.String(),
  name: Type.String(),
  token: Type.Optional(Type.String()),
  url: Type.String({ format: 'uri' }),
  webhook: Type.String(),
  events_subscribe: Type.String(),
  reject_calls: Type.Boolean(),
  auto_read_messages: Type.Boolean(),
  connected: Nullable(Type.Boolean()),
  connected_at: Nullable(DateTime),
  whatsapp_push_name: Nullable(Type.String()),
  whatsapp_jid: Nullable(Type.String()),
  billing_status: Type.Union(BILLING_STATUSES.map((b) => Type.Literal(b))),
  created_at: DateTime,
  updated_at: DateTime,
  cancel_at: Nullable(DateTime),
  expired_at: Nullable(DateTime),
  labels: Type.Record(Type.String(), Type.Unknown()),
});

export const InstancePage = Type.Object({
  page: Type.Integer(),
  size: Type.Integer(),
  total: Type.Integer(),
  total_pages: Type.Integer(),
  content: Type.Array(Instance),
});

export const TokenAnswer = Type.Object({ token: Type.String() });

export const StateAtQuery = Type.Object(
  { at: Type.String({ format: 'date-time', description: 'the moment, as an RFC 3339 date-time' }) },
  { additionalProperties: false },
);
