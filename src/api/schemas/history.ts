import { Type } from '@sinclair/typebox';
import { Nullable } from './common.js';

export const HistoryQuery = Type.Object(
  {
    after: Type.Optional(Type.String({ pattern: '^[0-9]{1,20}$', description: 'an event `position` or a page `next`: the page starts after it' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
    types: Type.Optional(Type.String({ minLength: 1, maxLength: 2000, description: 'comma-separated event types, e.g. InstanceCreated,MessageSent' })),
  },
  { additionalProperties: false },
);

const Actor = Type.Object({
  kind: Type.Union(['account', 'instance_token', 'network', 'system', 'helpdesk'].map((k) => Type.Literal(k))),
  id: Type.Optional(Type.String()),
});

const HistoryEvent = Type.Object({
  position: Type.String({ description: 'opaque; pass as `after`' }),
  id: Type.String(),
  type: Type.String(),
  stream: Type.String(),
  revision: Type.Integer({ minimum: 0 }),
  recorded_at: Type.String({ format: 'date-time' }),
  actor: Actor,
  correlation_id: Nullable(Type.String()),
  causation_id: Nullable(Type.String()),
  data: Nullable(
    Type.Record(Type.String(), Type.Unknown(), {
      description: 'the event data with secrets and hashes as "[redacted]"; null once retention removed it',
    }),
  ),
});

export const HistoryPage = Type.Object({
  events: Type.Array(HistoryEvent),
  next: Nullable(Type.String({ description: 'the `after` of the next page; null at the end' })),
});
