import type { MessagingCommands } from '../../commands/messaging.js';
import type { SendCommands } from '../../commands/sending/send-commands.js';
import { SendAnswer } from '../schemas/sending.js';
import { commandContext } from '../deps.js';
import { envelope } from '../envelope.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { InstanceIdParams } from '../schemas/common.js';
import { EmptyAnswer, MarkReadBody, MessageIdAnswer, ReactBody, SendButtonsBody } from '../schemas/messaging.js';

const TAG = 'Messaging';
const NOT_CONNECTED = [409, 502];

export function messagingRoutes(messaging: MessagingCommands, sending: SendCommands): AnyRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/instances/{id}/chat/send/buttons',
      idempotent: true,
      tag: TAG,
      summary: 'Send a button card; where the network will not render buttons, a numbered text fallback is sent and data.fallback (and the X-Fallback header) say so',
      auth: 'instance',
      liveSession: true,
      paidOnly: true,
      params: InstanceIdParams,
      body: SendButtonsBody,
      response: { description: 'sent, queued or scheduled', schema: SendAnswer },
      errors: [400, 404, ...NOT_CONNECTED],
      handler: async ({ instance, body, principal, requestId }) => {
        const draft = { kind: 'buttons' as const, buttons: body.buttons, ...(body.message === undefined ? {} : { text: body.message }), ...(body.footer === undefined ? {} : { footer: body.footer }) };
        const options = { ...(body.reply_to ? { reply_to: body.reply_to } : {}), ...(body.send_at ? { send_at: body.send_at } : {}), ...(body.delay_ms ? { delay_ms: body.delay_ms } : {}) };
        const a = await sending.send(instance, body.phone, draft, options, commandContext(principal, requestId, instance._id));
        // Never a silent downgrade: the answer says what was sent instead, in body and header.
        return { body: envelope(a), ...(a.fallback ? { headers: { 'x-fallback': a.fallback } } : {}) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/instances/{id}/chat/markread',
      tag: TAG,
      summary: 'Mark messages of a chat as read',
      auth: 'instance',
      liveSession: true,
      paidOnly: true,
      params: InstanceIdParams,
      body: MarkReadBody,
      response: { description: 'marked', schema: EmptyAnswer },
      errors: NOT_CONNECTED,
      handler: async ({ instance, body, principal, requestId }) => {
        await messaging.markRead(instance, body.phone, body.message_ids, commandContext(principal, requestId, instance._id));
        return { body: envelope({}) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/instances/{id}/chat/react',
      idempotent: true,
      tag: TAG,
      summary: 'React to a message ("" removes the reaction)',
      auth: 'instance',
      liveSession: true,
      paidOnly: true,
      params: InstanceIdParams,
      body: ReactBody,
      response: { description: 'reaction sent', schema: MessageIdAnswer },
      errors: NOT_CONNECTED,
      handler: async ({ instance, body, principal, requestId }) => ({
        body: envelope(await sending.react(instance, body.phone, body.message_id, body.reaction, commandContext(principal, requestId, instance._id))),
      }),
    }),
  ];
}
