import { Type } from '@sinclair/typebox';
import type { ApiDeps } from '../deps.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { DOCS_PAGE } from './docs-page.js';

const TAG = 'System';

/** `openapi` is read lazily: the document describes every route, these included. */
export function systemRoutes(deps: ApiDeps, openapi: () => unknown): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/health',
      tag: TAG,
      summary: 'The process is up',
      auth: 'public',
      response: { description: 'up', schema: Type.Object({ status: Type.Literal('ok') }) },
      handler: () => ({ body: { status: 'ok' } }),
    }),
    defineRoute({
      method: 'get',
      path: '/ready',
      tag: TAG,
      summary: 'Backends answer and projections have caught up',
      auth: 'public',
      response: {
        description: 'ready (503 when not)',
        schema: Type.Object({
          status: Type.String(),
          checks: Type.Record(Type.String(), Type.Union([Type.Boolean(), Type.String()]), {
            description: 'true/false per backend and projection; the real network adds whatsapp_version: the WhatsApp Web version in use and where it came from (fetched, WHATSAPP_VERSION, built-in)',
          }),
        }),
      },
      handler: async () => {
        const { ready, checks } = await deps.health.ready();
        return { status: ready ? 200 : 503, body: { status: ready ? 'ready' : 'not_ready', checks } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/openapi.json',
      tag: TAG,
      summary: 'This document',
      auth: 'public',
      response: { description: 'OpenAPI 3.1 document' },
      handler: () => ({ body: openapi() }),
    }),
    defineRoute({
      method: 'get',
      path: '/docs',
      tag: TAG,
      summary: 'A browsable view of the OpenAPI document',
      auth: 'public',
      response: { description: 'HTML page', contentType: 'text/html' },
      handler: () => ({ body: DOCS_PAGE, contentType: 'text/html; charset=utf-8' }),
    }),
  ];
}
