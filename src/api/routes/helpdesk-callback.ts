import { Type } from '@sinclair/typebox';
import type { HelpdeskCallbacks } from '../../commands/helpdesk-callbacks.js';
import { defineRoute } from '../route.js';

const CallbackParams = Type.Object({ path: Type.String({ minLength: 1, maxLength: 200 }) });
const CallbackAnswer = Type.Object({ received: Type.Literal(true), stored: Type.Boolean() });

/**
 * Where the helpdesk posts its events (the configuration's `webhook_url`). The unguessable path is
 * the credential; a signature is required on top whenever the inbox has a secret.
 */
export function helpdeskCallbackRoutes(callbacks: HelpdeskCallbacks) {
  return [
    defineRoute({
      method: 'post',
      path: '/helpdesk/webhook/{path}',
      tag: 'Helpdesk',
      summary: "The helpdesk's callback: an agent's answer is stored, then sent to WhatsApp from the log",
      auth: 'public',
      params: CallbackParams,
      rawBody: true,
      secretPath: true,
      response: { description: 'received (stored when it is an answer to send)', schema: CallbackAnswer },
      errors: [401, 404],
      handler: async ({ params, rawBody, koa, requestId }) => {
        const outcome = await callbacks.receive(
          params.path,
          rawBody ?? '',
          { signature: koa.get('x-chatwoot-signature') || undefined, timestamp: koa.get('x-chatwoot-timestamp') || undefined },
          requestId,
        );
        return { body: { received: true, stored: outcome === 'stored' } };
      },
    }),
  ];
}
