import type { TObject, TSchema } from '@sinclair/typebox';
import { ErrorBody } from './schemas/common.js';
import type { AnyRoute } from './route.js';

const ERROR_TEXT: Record<number, string> = {
  400: 'invalid input; `error.details` names the fields',
  401: 'missing or invalid credentials',
  402: 'payment required',
  403: 'the credentials do not match the instance or its owner',
  404: 'not found',
  409: 'conflict with the current state',
  413: 'request body too large',
  429: 'too many failed attempts; see Retry-After',
  502: 'upstream failed',
  503: 'with many nodes: the node holding the session does not answer; retry after Retry-After seconds',
};

/** The header of routes flagged `idempotent` (CONTRACT.md, Idempotent writes). */
const IDEMPOTENCY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7e]+$' },
  description:
    'Makes a retry safe: the same key from the same account within 24 hours answers the first answer again ' +
    '(same status and body, with `Idempotent-Replayed: true`) and has no second effect. The same key with a ' +
    'different body or route answers 409 `conflict`; while the first request is still running, a repeat answers ' +
    '409 `conflict` with `Retry-After`. A request that failed changed nothing and frees its key.',
};

/** Strips TypeBox's symbol keys and ids so the output is plain JSON Schema 2020-12. */
function plain(schema: TSchema): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema, (key, value) => (key === '$id' ? undefined : value))) as Record<string, unknown>;
}

function parameters(schema: TObject | undefined, where: 'path' | 'query') {
  if (!schema) return [];
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties).map(([name, s]) => ({
    name,
    in: where,
    required: where === 'path' || required.has(name),
    schema: plain(s),
    ...(s.description ? { description: s.description } : {}),
  }));
}

function security(route: AnyRoute) {
  switch (route.auth) {
    case 'public':
      return [];
    case 'instance':
      return [{ bearer: [] }, { instanceToken: [], clientToken: [] }];
    default:
      return [{ bearer: [] }];
  }
}

export interface OpenApiExtras {
  /** Event bodies delivered to webhooks, by event name. */
  webhooks?: Record<string, { summary: string; schema: TSchema }>;
}

/** The OpenAPI 3.1 document, built from the same route list the router mounts. */
export function buildOpenApi(routes: readonly AnyRoute[], version: string, extras: OpenApiExtras = {}) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    if (route.hidden) continue;
    const responses: Record<string, unknown> = {};
    const ok = route.response;
    responses[String(ok.status ?? 200)] = {
      description: ok.description,
      ...(ok.schema ? { content: { [ok.contentType ?? 'application/json']: { schema: plain(ok.schema) } } } : {}),
    };
    for (const other of route.otherAnswers ?? []) {
      responses[String(other.status)] = {
        description: other.description,
        ...(other.schema ? { content: { [other.contentType ?? 'application/json']: { schema: plain(other.schema) } } } : {}),
      };
    }
    const statuses = new Set(route.errors ?? []);
    if (route.body || route.query || route.params) statuses.add(400);
    if (route.auth !== 'public') statuses.add(401);
    if (route.auth === 'instance' || route.auth === 'instance_jwt') (statuses.add(403), statuses.add(404));
    if (route.body) statuses.add(413);
    if (route.idempotent) statuses.add(409);
    // Forwarded to the session's owner with many nodes: a dead owner answers 503 until its lease moves.
    if (route.liveSession || route.liveSessionOf) statuses.add(503);
    for (const status of [...statuses].sort()) {
      responses[String(status)] = {
        description: ERROR_TEXT[status] ?? 'error',
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      };
    }
    const pathParams = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
    const params = route.params
      ? parameters(route.params, 'path')
      : pathParams.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } }));
    (paths[route.path] ??= {})[route.method] = {
      summary: route.summary,
      tags: [route.tag],
      operationId: `${route.method}${route.path.replace(/[{}]/g, '').replace(/[/-](\w)/g, (_, c: string) => c.toUpperCase())}`,
      security: security(route),
      parameters: [...params, ...parameters(route.query, 'query'), ...(route.idempotent ? [IDEMPOTENCY_PARAMETER] : [])],
      ...(route.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: plain(route.body) } } } }
        : {}),
      responses,
    };
  }
  const webhooks: Record<string, unknown> = {};
  for (const [name, w] of Object.entries(extras.webhooks ?? {})) {
    webhooks[name] = {
      post: {
        summary: w.summary,
        requestBody: { content: { 'application/json': { schema: plain(w.schema) } } },
        responses: { '200': { description: 'any 2xx within 10 s acknowledges the delivery' } },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Instance Messaging Gateway API', version },
    paths,
    webhooks,
    components: {
      schemas: { Error: plain(ErrorBody) },
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        instanceToken: { type: 'apiKey', in: 'header', name: 'X-Instance-Token' },
        clientToken: { type: 'apiKey', in: 'header', name: 'X-Client-Token' },
      },
    },
  };
}
