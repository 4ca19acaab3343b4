import { Type } from '@sinclair/typebox';
import { Nullable } from './common.js';

const DateTime = Type.String({ format: 'date-time' });

export const StatsQuery = Type.Object(
  {
    from: Type.Optional({ ...DateTime, description: 'default: `to` minus 7 days' }),
    to: Type.Optional({ ...DateTime, description: 'default: now' }),
    bucket: Type.Optional(Type.Union([Type.Literal('hour'), Type.Literal('day')], { default: 'day' })),
  },
  { additionalProperties: false },
);

const Count = Type.Integer({ minimum: 0 });

export const StatsAnswer = Type.Object({
  buckets: Type.Array(
    Type.Object({
      start: DateTime,
      messages_in: Count,
      messages_out: Count,
      media_in: Count,
      media_out: Count,
      deliveries_ok: Count,
      deliveries_failed: Count,
      delivery_p95_ms: Nullable(Type.Integer({ minimum: 0, description: 'upper bound of the histogram bucket holding the 95th percentile' })),
      connected_seconds: Count,
    }),
  ),
});
