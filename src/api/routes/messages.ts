import { invalidInput, notFound } from '../../domain/errors.js';
import type { MessageQueries, SearchRequest } from '../../projections/messages/message-queries.js';
import { envelope } from '../envelope.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { Envelope, InstanceIdParams } from '../schemas/common.js';
import { ChatMessagesParams, ChatMessagesQuery, Message, MessagePage, SearchQuery } from '../schemas/messages.js';
import { MessageParams } from '../schemas/sending.js';

const TAG = 'Messages';

/** A chat as the model keys it: digits are a person's phone jid; a device suffix names the same person. */
function chatJid(given: string): string {
  if (/^[0-9]+$/.test(given)) return `${given}@s.whatsapp.net`;
  return given.replace(/:[0-9]+@s\.whatsapp\.net$/, '@s.whatsapp.net');
}

function time(field: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw invalidInput(field, `${field} is not a date-time`);
  return ms;
}

/** CONTRACT.md, Messages: a chat's page, a message by id, search. */
export function messageRoutes(queries: MessageQueries): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/instances/{id}/chats/{jid}/messages',
      tag: TAG,
      summary: "A chat's messages, newest first; `before` (a message_id of the chat) pages back",
      auth: 'instance',
      params: ChatMessagesParams,
      query: ChatMessagesQuery,
      response: { description: 'a page of messages', schema: MessagePage },
      errors: [400, 404],
      handler: async ({ instance, params, query }) => ({ body: envelope(await queries.page(instance._id, chatJid(params.jid), query.limit ?? 50, query.before)) }),
    }),
    // Before /messages/{message_id}, which would take "search" for an id.
    defineRoute({
      method: 'get',
      path: '/instances/{id}/messages/search',
      tag: TAG,
      summary: 'Messages whose text or caption holds every word of `q`, newest first; narrowed by chat and time',
      auth: 'instance',
      params: InstanceIdParams,
      query: SearchQuery,
      response: { description: 'a page of messages', schema: MessagePage },
      errors: [400],
      handler: async ({ instance, query }) => {
        const request: SearchRequest = { q: query.q, limit: query.limit ?? 50 };
        const fromMs = time('from', query.from);
        const toMs = time('to', query.to);
        if (fromMs !== undefined && toMs !== undefined && fromMs >= toMs) throw invalidInput('to', '`to` must be after `from`');
        if (fromMs !== undefined) request.fromMs = fromMs;
        if (toMs !== undefined) request.toMs = toMs;
        if (query.chat !== undefined) request.chat = chatJid(query.chat);
        if (query.before !== undefined) request.before = query.before;
        return { body: envelope(await queries.search(instance._id, request)) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/instances/{id}/messages/{message_id}',
      tag: TAG,
      summary: 'A message of any chat as it stands now: receipts (own messages), reactions, edit, deletion, poll tally',
      auth: 'instance',
      params: MessageParams,
      response: { description: 'the message', schema: Envelope(Message) },
      errors: [404],
      handler: async ({ instance, params }) => {
        const message = await queries.byId(instance._id, params.message_id);
        if (!message) throw notFound(`message ${params.message_id} not found`);
        return { body: envelope(message) };
      },
    }),
  ];
}
