import { timingSafeEqual } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Metrics } from '../../infra/metrics/metrics.js';

export interface MetricsEndpoint {
  /** METRICS_TOKEN: the scrape's bearer token; unset, /metrics does not exist on the API port. */
  token?: string;
  /** METRICS_PORT is set: metrics are served there only. */
  elsewhere: boolean;
}

/**
 * Times every request by its route template (the router names it), and answers `GET /metrics`
 * and `GET /cluster` (the nodes, as JSON) on the API port when a token is configured. It runs outside the error mapping, so it sees the
 * status the client got.
 */
export function metricsMiddleware(metrics: Metrics, endpoint: MetricsEndpoint): Middleware {
  const expected = endpoint.token ? Buffer.from(`Bearer ${endpoint.token}`) : null;
  return async (ctx, next) => {
    if ((ctx.path === '/metrics' || ctx.path === '/cluster') && expected && !endpoint.elsewhere && (ctx.method === 'GET' || ctx.method === 'HEAD')) {
      const given = Buffer.from(ctx.get('authorization'));
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        ctx.status = 401;
        ctx.set('www-authenticate', 'Bearer');
        ctx.body = { code: 401, success: false, error: { type: 'unauthorized', message: 'send Authorization: Bearer $METRICS_TOKEN' } };
        return;
      }
      if (ctx.path === '/cluster') ctx.body = await metrics.cluster();
      else {
        ctx.type = metrics.contentType;
        ctx.body = await metrics.text();
      }
      return;
    }
    const started = performance.now();
    try {
      await next();
    } finally {
      const route = typeof ctx.state.route === 'string' ? ctx.state.route : 'unmatched';
      metrics.requests.observe(ctx.method, route, ctx.status, (performance.now() - started) / 1000);
    }
  };
}
