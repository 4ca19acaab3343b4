import type { Static, TObject } from '@sinclair/typebox';
import type { ChatActionCommands, ChatActionRequest } from '../../commands/chat-actions.js';
import { commandContext } from '../deps.js';
import { envelope } from '../envelope.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { ArchiveBody, ClearChatBody, DeleteChatBody, MarkUnreadBody, MuteBody, PinBody } from '../schemas/chat-actions.js';
import { InstanceIdParams } from '../schemas/common.js';
import { EmptyAnswer } from '../schemas/messaging.js';

const TAG = 'Chat actions';

/** The chat actions of the spec's "other operations": archive, pin, mute, read state, delete, clear. */
export function chatActionRoutes(commands: ChatActionCommands): AnyRoute[] {
  const action = <B extends TObject>(path: string, summary: string, body: B, toRequest: (body: Static<B>) => { phone: string; request: ChatActionRequest }) =>
    defineRoute({
      method: 'post',
      path: `/instances/{id}/chat/${path}`,
      tag: TAG,
      summary,
      auth: 'instance',
      liveSession: true,
      paidOnly: true,
      params: InstanceIdParams,
      body,
      response: { description: 'done; the chat list shows the change', schema: EmptyAnswer },
      errors: [400, 409, 502],
      handler: async ({ instance, body: input, principal, requestId }) => {
        const { phone, request } = toRequest(input);
        await commands.apply(instance, phone, request, commandContext(principal, requestId, instance._id));
        return { body: envelope({}) };
      },
    });

  return [
    action('archive', 'Archive or unarchive a chat', ArchiveBody, (b) => ({ phone: b.phone, request: { type: 'archive', archived: b.archived } })),
    action('pin', 'Pin or unpin a chat (pinned chats list first)', PinBody, (b) => ({ phone: b.phone, request: { type: 'pin', pinned: b.pinned } })),
    action('mute', 'Mute a chat until a time (unix seconds), for always (-1), or unmute (0)', MuteBody, (b) => ({ phone: b.phone, request: { type: 'mute', until: b.until } })),
    action('markunread', 'Mark a chat unread, or read', MarkUnreadBody, (b) => ({ phone: b.phone, request: { type: 'mark_unread', unread: b.unread } })),
    action('delete', 'Delete a chat, or one message of it, for this account only', DeleteChatBody, (b) => ({
      phone: b.phone,
      request: {
        type: 'delete',
        ...(b.message_id === undefined ? {} : { message_id: b.message_id }),
        ...(b.from_me === undefined ? {} : { from_me: b.from_me }),
      },
    })),
    action('clear', "Clear a chat's messages, keeping the chat", ClearChatBody, (b) => ({ phone: b.phone, request: { type: 'clear' } })),
  ];
}
