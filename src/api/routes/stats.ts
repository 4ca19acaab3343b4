import { invalidInput } from '../../domain/errors.js';
import type { Clock } from '../../infra/clock.js';
import { BUCKET_MS, type BucketSize } from '../../projections/stats/buckets.js';
import type { StatsQueries, StatsRange } from '../../projections/stats/stats-queries.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { InstanceIdParams } from '../schemas/common.js';
import { StatsAnswer, StatsQuery } from '../schemas/stats.js';

const TAG = 'Statistics';
const DEFAULT_SPAN_MS = 7 * 86_400_000;
/** About three months by hour, ten years by day. */
const MAX_BUCKETS = 2_500;

type Query = { from?: string; to?: string; bucket?: BucketSize };

/** CONTRACT.md, statistics: per instance, and summed over the account's instances. */
export function statsRoutes(stats: StatsQueries, clock: Clock): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/instances/{id}/stats',
      tag: TAG,
      summary: 'Messages, media, webhook outcomes and connected time of the instance, by hour or day',
      auth: 'instance',
      params: InstanceIdParams,
      query: StatsQuery,
      response: { description: 'the buckets of the range, oldest first', schema: StatsAnswer },
      handler: async ({ instance, query }) => ({ body: { buckets: await stats.forInstance(instance._id, range(query, clock)) } }),
    }),
    defineRoute({
      method: 'get',
      path: '/account/stats',
      tag: TAG,
      summary: "The same statistics summed over the account's instances",
      auth: 'jwt',
      query: StatsQuery,
      response: { description: 'the buckets of the range, oldest first', schema: StatsAnswer },
      handler: async ({ principal, query }) => ({ body: { buckets: await stats.forAccount(principal.accountId, range(query, clock)) } }),
    }),
  ];
}

function range(query: Query, clock: Clock): StatsRange {
  const nowMs = clock.now().getTime();
  const size = query.bucket ?? 'day';
  const toMs = query.to !== undefined ? Date.parse(query.to) : nowMs;
  const fromMs = query.from !== undefined ? Date.parse(query.from) : toMs - DEFAULT_SPAN_MS;
  if (!(fromMs < toMs)) throw invalidInput('from', 'must be before `to`');
  if ((toMs - fromMs) / BUCKET_MS[size] > MAX_BUCKETS) throw invalidInput('from', `the range spans more than ${MAX_BUCKETS} buckets of a ${size}`);
  return { fromMs, toMs, size, nowMs };
}
