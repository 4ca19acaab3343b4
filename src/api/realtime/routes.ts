import { Type } from '@sinclair/typebox';
import { defineRoute } from '../route.js';
import { InstanceIdParams } from '../schemas/common.js';

const StreamQuery = Type.Object({
  types: Type.Optional(Type.String({ maxLength: 512, description: 'comma-separated event names (default All)' })),
  after_seq: Type.Optional(Type.Integer({ minimum: 0, description: 'replay everything after this seq from the log, then go live' })),
  access_token: Type.Optional(Type.String({ maxLength: 4096, description: 'the JWT, for clients that cannot send headers' })),
});

/**
 * The realtime stream is a WebSocket upgrade (see realtime-server.ts); this route documents it and
 * answers a plain GET, which cannot become a stream, with 426.
 */
export function realtimeRoutes() {
  return [
    defineRoute({
      method: 'get',
      path: '/instances/{id}/events/ws',
      tag: 'Realtime',
      summary:
        'Upgrade to a WebSocket that sends the webhook bodies of the subscribed types from the log; send {"ack": seq}; reconnect with after_seq to replay; no ack for 60 s closes it. The web app\'s session cookie also opens it, from the gateway\'s own origin only',
      auth: 'instance',
      params: InstanceIdParams,
      query: StreamQuery,
      response: { description: 'switching protocols (a plain GET answers 426)', status: 101 },
      errors: [426, 429],
      handler: () => ({
        status: 426,
        headers: { upgrade: 'websocket', connection: 'Upgrade' },
        body: { code: 426, success: false, error: { type: 'upgrade_required', message: 'open this URL as a WebSocket' } },
      }),
    }),
  ];
}
