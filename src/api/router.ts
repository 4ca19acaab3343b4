import Router from '@koa/router';
import type { TSchema } from '@sinclair/typebox';
import type { Context, Middleware } from 'koa';
import { koaBody } from 'koa-body';
import type { Authenticator } from './auth/authenticate.js';
import type { IdempotencyStore } from './idempotency/idempotency-store.js';
import { once, type StoredAnswer } from './idempotency/once.js';
import { FORWARD_BODY, LIVE_INSTANCE } from './middleware/forward-to-owner.js';
import type { RateLimits } from './middleware/rate-limits.js';
import type { AnyRoute, Principal, RouteInput } from './route.js';
import { boundedParams, checkDepth, Validator } from './validation.js';
import { invalidInput } from '../domain/errors.js';

/** What a route without a query schema receives as its query. */
const NO_INPUT = Object.freeze({});

/**
 * Mounts routes: body limit, auth, validation, handler, answer. Handlers see typed input only.
 * `toOwner`, with many nodes, sends a `liveSession` route's request to the node owning the
 * session once the caller is authenticated, before its body is read.
 */
export function buildRouter(
  routes: readonly AnyRoute[],
  auth: Authenticator,
  defaultBodyLimit: number,
  idempotency: IdempotencyStore,
  limits?: RateLimits,
  toOwner?: Middleware,
): Router {
  const router = new Router();
  for (const route of routes) {
    const koaPath = route.path.replace(/\{(\w+)\}/g, ':$1');
    const body = route.body ? new Validator(route.body as TSchema, 'body') : null;
    const query = route.query ? new Validator(route.query, 'query') : null;
    const params = route.params ? new Validator(route.params, 'params') : null;
    const takesBody = route.method !== 'get' && route.method !== 'delete';
    const readsBody = takesBody || body !== null;
    const parser = koaBody({
      json: true,
      jsonStrict: true,
      jsonLimit: route.bodyLimit ?? defaultBodyLimit,
      text: false,
      urlencoded: false,
      multipart: false,
      patchKoa: true,
      // A route forwarded by its body passes the exact bytes on.
      includeUnparsed: route.rawBody === true || route.liveSessionOf !== undefined,
    });

    router[route.method](koaPath, async (ctx: Context) => {
      // The template, not the path: metrics group requests by it.
      ctx.state.route = route.path;
      // API answers are per caller, and many carry a secret (tokens, client and webhook secrets):
      // no cache keeps one. A handler that serves something cacheable says so itself.
      ctx.set('Cache-Control', 'no-store');
      if (route.secretPath) ctx.state.secretPath = true;
      // Path ids are checked before anything is looked up with them: their shape says nothing
      // about which instances exist, and an unbounded id must never reach a store's index.
      const pathParams = params ? (params.parse(boundedParams(ctx.params)) as Record<string, string>) : boundedParams(ctx.params);
      // Credentials next: an anonymous caller learns nothing about bodies or instances.
      const instanceId = route.auth === 'instance' || route.auth === 'instance_jwt' ? pathParams.id : undefined;
      const { principal, instance } = await auth.authenticate(ctx, route.auth, instanceId);
      if (limits && principal) limits.take(principal.accountId, instance?._id);
      if (toOwner && route.liveSession && instance) {
        ctx.state[LIVE_INSTANCE] = instance._id;
        return toOwner(ctx, () => local(ctx, principal, instance, pathParams));
      }
      if (toOwner && route.liveSessionOf && principal) {
        // The owner is named by the body: read and checked here first, then passed on as received.
        const parsed = await parsedBody(ctx);
        const owned = await route.liveSessionOf({ accountId: principal.accountId, params: pathParams, body: parsed } as never);
        if (owned !== null) {
          ctx.state[LIVE_INSTANCE] = owned;
          if (takesBody) ctx.state[FORWARD_BODY] = (ctx.request as { rawBody?: string }).rawBody ?? '';
          return toOwner(ctx, () => local(ctx, principal, instance, pathParams, { value: parsed }));
        }
        return local(ctx, principal, instance, pathParams, { value: parsed });
      }
      return local(ctx, principal, instance, pathParams);
    });

    /** The body parsed and checked against the route's schema (undefined for a route without one). */
    const parsedBody = async (ctx: Context): Promise<unknown> => {
      if (takesBody) await readBody(parser, ctx);
      if (takesBody) checkDepth(ctx.request.body);
      return body ? body.parse(ctx.request.body ?? {}) : undefined;
    };

    /** What this node does with the request: parse, validate, run the handler (once, when idempotent). */
    const local = async (
      ctx: Context,
      principal: Principal | undefined,
      instance: RouteInput<unknown, unknown, unknown>['instance'] | undefined,
      pathParams: Record<string, string>,
      parsed?: { value: unknown },
    ) => {
      const input = new Input(
        // A GET or DELETE without a body schema has nothing to read: no await for it.
        parsed ? parsed.value : readsBody ? await parsedBody(ctx) : undefined,
        query ? query.parse({ ...ctx.query }) : NO_INPUT,
        pathParams,
        principal as Principal,
        instance as RouteInput<unknown, unknown, unknown>['instance'],
        ctx.state.requestId as string,
        ctx,
      );
      if (route.rawBody) input.rawBody = (ctx.request as { rawBody?: string }).rawBody ?? '';
      if (route.idempotent) {
        const run = async (): Promise<StoredAnswer> => {
          const answer = await route.handler(input as Parameters<AnyRoute['handler']>[0]);
          return { status: answer.status ?? route.response.status ?? 200, body: answer.body, headers: answer.headers ?? {} };
        };
        const answer = await once(idempotency, ctx, (principal as Principal).accountId, run);
        ctx.status = answer.status;
        for (const [k, v] of Object.entries(answer.headers)) ctx.set(k, v);
        ctx.body = answer.body;
        return;
      }
      const answer = await route.handler(input as Parameters<AnyRoute['handler']>[0]);
      ctx.status = answer.status ?? route.response.status ?? 200;
      if (answer.headers) for (const [k, v] of Object.entries(answer.headers)) ctx.set(k, v);
      if (answer.contentType) ctx.type = answer.contentType;
      ctx.body = isJson(answer.contentType, answer.body) ? serialised(ctx, answer.body) : answer.body;
    };
  }
  return router;
}

const JSON_TYPE = 'application/json; charset=utf-8';

/** An answer Koa would send as JSON: an object or array that is not bytes nor a stream. */
const isJson = (contentType: string | undefined, body: unknown): body is object =>
  contentType === undefined && typeof body === 'object' && body !== null && !Buffer.isBuffer(body) && typeof (body as { pipe?: unknown }).pipe !== 'function';

/**
 * The JSON Koa would send, serialised here with its type set: given an object, Koa looks the
 * type up by extension and drops and recomputes the length on every request; given the text
 * with the type already set, it only measures it. The same bytes and headers go out.
 */
function serialised(ctx: Context, body: object): string {
  ctx.set('Content-Type', JSON_TYPE);
  return JSON.stringify(body);
}

/**
 * What a handler receives. A class, so that `ip` can be a getter on its prototype: Koa works the
 * address out from the socket and the proxy headers, and only the few routes that record it
 * (sign-in) ask. (A getter in an object literal made V8 build every input as a slow dictionary.)
 */
class Input implements RouteInput<unknown, unknown, unknown> {
  rawBody?: string;

  constructor(
    readonly body: unknown,
    readonly query: unknown,
    readonly params: unknown,
    readonly principal: Principal,
    readonly instance: RouteInput<unknown, unknown, unknown>['instance'],
    readonly requestId: string,
    readonly koa: Context,
  ) {}

  get ip(): string {
    return this.koa.ip;
  }
}

/**
 * Runs the body parser. What it throws is about the bytes the client sent: statuses it set (413,
 * 415, malformed JSON) are kept; anything else (a zlib or brotli stream that is not one, cut
 * short, or an aborted upload) is the body's fault too, so it is a 400, never a 500.
 */
async function readBody(parser: Middleware, ctx: Context): Promise<void> {
  try {
    await parser(ctx, async () => undefined);
  } catch (err) {
    const status = (err as { status?: unknown }).status;
    if (typeof status === 'number' && status >= 400 && status < 500) throw err;
    throw invalidInput('body', 'could not be decoded as its content-encoding says');
  }
}
