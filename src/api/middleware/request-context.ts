import { randomBytes } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { toHttpError, type HttpError } from '../errors.js';
import { AccessLog } from './access-log.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Request ids are UUID-shaped: 72 random bits drawn once per process, then a counter. They need to
 * be unique, not unguessable, and a random draw per request cost more than the rest of this file.
 */
const processBits = randomBytes(10).toString('hex');
const idPrefix = `${processBits.slice(0, 8)}-${processBits.slice(8, 12)}-4${processBits.slice(12, 15)}-8${processBits.slice(15, 18)}-`;
let sequence = 0;
const nextRequestId = () => idPrefix + (sequence = (sequence + 1) % 2 ** 48).toString(16).padStart(12, '0');

/** Request id, one access-log line, and the one mapping of thrown errors to the error shape. */
export function requestContext(logger: Logger): Middleware {
  // The access line holds only the fields below, none of them a credential, so AccessLog writes
  // it without the logger's redaction paths: matching them against every line cost as much as writing it.
  const access = new AccessLog(logger);
  return async (ctx, next) => {
    const logging = access.enabled;
    const started = logging ? performance.now() : 0;
    const incoming = ctx.get('x-request-id');
    const requestId = incoming !== '' && REQUEST_ID.test(incoming) ? incoming : nextRequestId();
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
    if (logging) {
      const ms = performance.now() - started;
      // A path that is itself a credential (the helpdesk callback's) is logged as its template.
      const path = ctx.state.secretPath === true ? (ctx.state.route as string) : ctx.path;
      access.record(requestId, ctx.method, path, ctx.status, Math.round(ms * 10) / 10);
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
