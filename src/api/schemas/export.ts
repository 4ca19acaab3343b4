import { Type } from '@sinclair/typebox';
import { Envelope, Nullable } from './common.js';

export const SetExportBody = Type.Object(
  {
    events: Type.Union(
      [
        Type.String({ pattern: '^[A-Za-z]+(,[A-Za-z]+)*$', maxLength: 512 }),
        Type.Array(Type.String({ pattern: '^[A-Za-z]+$', maxLength: 64 }), { minItems: 1, maxItems: 16 }),
      ],
      { description: 'event types to export, as the webhook\'s `events` (comma-separated names, or a list); `All` for every type' },
    ),
  },
  { additionalProperties: false },
);

const SinkStatus = Type.Object({
  sink: Type.Union([Type.Literal('amqp'), Type.Literal('nats')]),
  connected: Type.Boolean({ description: "this node's connection to the broker can publish now" }),
  lag: Type.Integer({ description: 'events recorded for export that this broker has not confirmed yet' }),
  last_published_seq: Type.Integer(),
  last_error: Nullable(Type.String()),
  last_error_at: Nullable(Type.String({ format: 'date-time' })),
  skipped: Type.Integer({ description: 'events this broker refused for good (too large) that were passed over, not exported' }),
  last_skipped: Nullable(Type.String({ description: 'why the last of them was refused, and which event it was' })),
});

export const ExportState = Envelope(
  Type.Object({
    events: Type.String({ description: "comma-separated, as the webhook's; '' when the export is off" }),
    lag: Type.Integer({ description: 'events recorded for export that the slowest broker has not confirmed yet' }),
    last_published_seq: Type.Integer({ description: 'every event up to this seq is published to every broker' }),
    last_error: Nullable(Type.String()),
    sinks: Type.Array(SinkStatus),
  }),
);
