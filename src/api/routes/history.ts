import { invalidInput } from '../../domain/errors.js';
import { isEventType } from '../../projections/history/event-catalog.js';
import type { HistoryQueries, HistoryRequest } from '../../projections/history/history-queries.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { InstanceIdParams } from '../schemas/common.js';
import { HistoryPage, HistoryQuery } from '../schemas/history.js';

const TAG = 'History';

type Query = { after?: string; limit?: number; types?: string };

/** CONTRACT.md, History: an instance's events and the account's own, in log order. */
export function historyRoutes(history: HistoryQueries): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/instances/{id}/history',
      tag: TAG,
      summary: "Every event of the instance in log order, secrets redacted, with who caused each (owner's JWT)",
      auth: 'instance_jwt',
      params: InstanceIdParams,
      query: HistoryQuery,
      response: { description: 'a page of history', schema: HistoryPage },
      handler: async ({ instance, query }) => ({ body: await history.page({ instanceId: instance._id }, request(query)) }),
    }),
    defineRoute({
      method: 'get',
      path: '/account/history',
      tag: TAG,
      summary: "The account's own events: sign-up, sign-ins with address, secret rotations, instances created and canceled",
      auth: 'jwt',
      query: HistoryQuery,
      response: { description: 'a page of history', schema: HistoryPage },
      handler: async ({ principal, query }) => ({ body: await history.page({ accountId: principal.accountId }, request(query)) }),
    }),
  ];
}

function request(query: Query): HistoryRequest {
  const out: HistoryRequest = { limit: query.limit ?? 100 };
  if (query.after !== undefined) out.after = query.after;
  if (query.types !== undefined) out.types = parseTypes(query.types);
  return out;
}

function parseTypes(list: string): string[] {
  const types = [...new Set(list.split(','))];
  const bad = types.find((t) => !isEventType(t));
  if (bad !== undefined) throw invalidInput('types', `unknown event type "${bad}"`);
  return types;
}
