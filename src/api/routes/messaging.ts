import type { MessagingCommands } from '../../commands/messaging.js';
import { commandContext } from '../deps.js';
import { envelope } from '../envelope.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { InstanceIdParams } from '../schemas/common.js';
import { ButtonsAnswer, EmptyAnswer, MarkReadBody, MessageIdAnswer, ReactBody, SendButtonsBody, SendTextBody } from '../schemas/messaging.js';

const TAG = 'Messaging';
const NOT_CONNECTED = [409, 502];

export function messagingRoutes(messaging: MessagingCommands): AnyRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/instances/{id}/chat/send/text',
      idempotent: true,
      tag: TAG,
      summary: 'Send a text message (409 not_connected when the session is down)',
      auth: 'instance',
      liveSession: true,
      paidOnly: true,
      params: InstanceIdParams,
      body: SendTextBody,
      response: { description: 'sent', schema: MessageIdAnswer },
      errors: NOT_CONNECTED,
      handler: async ({ instance, body, principal, requestId }) => {
        const { messageId, queued } = await messaging.sendText(instance, body.phone, body.message, body.reply_to, commandContext(principal, requestId, instance._id));
        return { body: envelope(queued ? { message_id: messageId, status: 'queued' as const } : { message_id: messageId }) };
      },
    }),
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
      response: { description: 'request accepted', schema: ButtonsAnswer },
      errors: NOT_CONNECTED,
      handler: async ({ instance, body, principal, requestId }) => {
        const content = { buttons: body.buttons, ...(body.message === undefined ? {} : { text: body.message }), ...(body.footer === undefined ? {} : { footer: body.footer }) };
        const { messageId, fallback, queued } = await messaging.sendButtons(instance, body.phone, content, commandContext(principal, requestId, instance._id));
        if (queued) return { body: envelope({ message_id: messageId, status: 'queued' as const }) };
        // Never a silent downgrade: the answer says what was sent instead, in body and header.
        if (!fallback) return { body: envelope({ message_id: messageId }) };
        return { body: envelope({ message_id: messageId, fallback }), headers: { 'x-fallback': fallback } };
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
        body: envelope({ message_id: await messaging.react(instance, body.phone, body.message_id, body.reaction, commandContext(principal, requestId, instance._id)) }),
      }),
    }),
  ];
}
