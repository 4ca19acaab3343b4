import Koa, { type Middleware } from 'koa';
import type { Logger } from 'pino';
import { Authenticator } from './auth/authenticate.js';
import type { JwtIssuer } from './auth/jwt.js';
import type { TokenRegistry } from './auth/token-registry.js';
import type { IdempotencyStore } from './idempotency/idempotency-store.js';
import type { ApiDeps } from './deps.js';
import { methodChecks } from './middleware/method-not-allowed.js';
import { requestContext } from './middleware/request-context.js';
import { metricsMiddleware, type MetricsEndpoint } from './middleware/metrics.js';
import { RateLimits } from './middleware/rate-limits.js';
import type { Metrics } from '../infra/metrics/metrics.js';
import { buildOpenApi, type OpenApiExtras } from './openapi.js';
import type { AnyRoute } from './route.js';
import { dispatchByShape } from './shape-router.js';
import { buildRouter } from './router.js';
import { accountRoutes } from './routes/accounts.js';
import { instanceRoutes } from './routes/instances.js';
import { systemRoutes } from './routes/system.js';
import { webhookRoutes } from './routes/webhook.js';

export interface AppOptions {
  deps: ApiDeps;
  metrics?: { metrics: Metrics; endpoint: MetricsEndpoint };
  jwt: JwtIssuer;
  /** Revoked access tokens and their use, checked with every JWT. */
  tokens: TokenRegistry;
  logger: Logger;
  /** Routes of features that live outside the core (sessions, sandbox, chats...). */
  extraRoutes?: AnyRoute[];
  openApiExtras?: OpenApiExtras;
  /** Where Idempotency-Key answers are kept (routes flagged `idempotent`). */
  idempotency: IdempotencyStore;
  /** Many nodes: sends requests of `liveSession` routes to the node owning the session (middleware/forward-to-owner). */
  toOwner?: Middleware;
  /** The rate limits' time source (RateLimits' default when absent); tests move it by hand. */
  monotonicMs?: () => number;
}

export function buildApp({ deps, jwt, tokens, logger, metrics, extraRoutes = [], openApiExtras, idempotency, toOwner, monotonicMs }: AppOptions): Koa {
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

  const auth = new Authenticator(jwt, deps.accountQueries, deps.instanceQueries, deps.clock, tokens);
  // With TRUST_PROXY the address is the last X-Forwarded-For entry, the one our own proxy wrote;
  // earlier entries come from the client and would let anyone pick the address it is limited by.
  const app = new Koa({ proxy: deps.config.TRUST_PROXY, maxIpsCount: 1 });
  app.silent = true;
  if (metrics) app.use(metricsMiddleware(metrics.metrics, metrics.endpoint));
  app.use(requestContext(logger));
  const methods = methodChecks(routes);
  app.use(methods.literal);
  const limits = new RateLimits({ accountPerS: deps.config.RATE_LIMIT_ACCOUNT_PER_S, instancePerS: deps.config.RATE_LIMIT_INSTANCE_PER_S }, monotonicMs);
  app.use(dispatchByShape(routes, (group) => buildRouter(group, auth, deps.config.BODY_LIMIT_BYTES, idempotency, limits, toOwner)));
  app.use(methods.fallback);
  return app;
}
