import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { toHttpError, type HttpError } from '../errors.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Request id, one access-log line, and the one mapping of thrown errors to the error shape. */
export function requestContext(logger: Logger): Middleware {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    const incoming = ctx.get('x-request-id');
    const requestId = REQUEST_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        ctx.throw(404);
      }
    } catch (err) {
      const mapped = isRouteMiss(err) ? notFoundRoute() : toHttpError(err);
      if (mapped.status >= 500) logger.error({ err, requestId }, 'request failed');
      ctx.status = mapped.status;
      ctx.body = mapped.body;
      for (const [k, v] of Object.entries(mapped.headers)) ctx.set(k, v);
    }
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    if (logger.isLevelEnabled('info')) {
      logger.info({ requestId, method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(ms * 10) / 10 }, 'request');
    }
  };
}

const isRouteMiss = (err: unknown) => (err as { status?: number }).status === 404 && (err as { expose?: boolean }).expose === true;

function notFoundRoute(): HttpError {
  return {
    status: 404,
    body: { code: 404, success: false, error: { type: 'not_found', message: 'no such route' } },
    headers: {},
  };
}
