import Koa from 'koa';
import type { Logger } from 'pino';
import { Authenticator } from './auth/authenticate.js';
import type { JwtIssuer } from './auth/jwt.js';
import type { ApiDeps } from './deps.js';
import { requestContext } from './middleware/request-context.js';
import { metricsMiddleware, type MetricsEndpoint } from './middleware/metrics.js';
import { RateLimits } from './middleware/rate-limits.js';
import type { Metrics } from '../infra/metrics/metrics.js';
import { buildOpenApi, type OpenApiExtras } from './openapi.js';
import type { AnyRoute } from './route.js';
import { dispatchByShape } from './dispatch.js';
import { buildRouter } from './router.js';
import { accountRoutes } from './routes/accounts.js';
import { instanceRoutes } from './routes/instances.js';
import { systemRoutes } from './routes/system.js';
import { webhookRoutes } from './routes/webhook.js';

export interface AppOptions {
  deps: ApiDeps;
  metrics?: { metrics: Metrics; endpoint: MetricsEndpoint };
  jwt: JwtIssuer;
  logger: Logger;
  /** Routes of features that live outside the core (sessions, sandbox, chats...). */
  extraRoutes?: AnyRoute[];
  openApiExtras?: OpenApiExtras;
}

export function buildApp({ deps, jwt, logger, metrics, extraRoutes = [], openApiExtras }: AppOptions): Koa {
  let document: unknown;
  const routes: AnyRoute[] = [];
  routes.push(
    ...systemRoutes(deps, () => document),
    ...accountRoutes(deps),
    ...instanceRoutes(deps),
    ...webhookRoutes(deps),
    ...extraRoutes,
  );
  document = buildOpenApi(routes, deps.version, openApiExtras);

  const auth = new Authenticator(jwt, deps.accountQueries, deps.instanceQueries, deps.clock);
  const app = new Koa({ proxy: false });
  app.silent = true;
  if (metrics) app.use(metricsMiddleware(metrics.metrics, metrics.endpoint));
  app.use(requestContext(logger));
  const limits = new RateLimits({ accountPerS: deps.config.RATE_LIMIT_ACCOUNT_PER_S, instancePerS: deps.config.RATE_LIMIT_INSTANCE_PER_S });
  app.use(dispatchByShape(routes, (group) => buildRouter(group, auth, deps.config.BODY_LIMIT_BYTES, limits)));
  return app;
}
