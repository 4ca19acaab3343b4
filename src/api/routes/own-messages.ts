import { Type } from '@sinclair/typebox';
import { notFound } from '../../domain/errors.js';
import type { OwnMessageQueries } from '../../projections/own-messages/own-message-queries.js';
import { envelope } from '../envelope.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { Envelope } from '../schemas/common.js';
import { MessageParams } from '../schemas/sending.js';

const OwnMessage = Type.Object({
  message_id: Type.String(),
  chat_jid: Type.String(),
  from_me: Type.Boolean(),
  timestamp: Type.Optional(Type.String({ format: 'date-time' })),
  kind: Type.String({ description: 'text, image, video, audio, document, sticker, location, contact, poll, list, buttons, other' }),
  text: Type.Optional(Type.String()),
  caption: Type.Optional(Type.String()),
  media: Type.Optional(Type.Object({ mimetype: Type.String(), file_length: Type.Integer(), file_name: Type.Optional(Type.String()), seconds: Type.Optional(Type.Integer()), voice: Type.Optional(Type.Boolean()) })),
  location: Type.Optional(Type.Unknown()),
  contacts: Type.Optional(Type.Unknown()),
  poll: Type.Optional(Type.Object({ name: Type.String(), selectable_count: Type.Integer(), options: Type.Array(Type.Object({ name: Type.String(), votes: Type.Integer() })) })),
  reply_to: Type.Optional(Type.String()),
  mentions: Type.Optional(Type.Array(Type.String())),
  edited_at: Type.Optional(Type.String()),
  revoked: Type.Boolean(),
  status: Type.Union(['scheduled', 'queued', 'sent', 'delivered', 'read', 'played', 'failed', 'canceled'].map((s) => Type.Literal(s))),
  error: Type.Optional(Type.Object({ code: Type.Optional(Type.Integer()), reason: Type.String() }, { description: "why it failed: the network's error (e.g. 463) or why a send was given up" })),
  send_at: Type.Optional(Type.String({ format: 'date-time' })),
});

/** `GET /instances/{id}/messages/{message_id}` for the instance's own messages (issue 30 widens it to every message). */
export function ownMessageRoutes(queries: OwnMessageQueries): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/instances/{id}/messages/{message_id}',
      tag: 'Sending',
      summary: 'A message the instance sent and what became of it (status: scheduled, queued, sent, delivered, read, played, failed, canceled)',
      auth: 'instance',
      params: MessageParams,
      response: { description: 'the message', schema: Envelope(OwnMessage) },
      errors: [404],
      handler: async ({ instance, params }) => {
        const message = await queries.byId(instance._id, params.message_id);
        if (!message) throw notFound(`message ${params.message_id} not found`);
        return { body: envelope(message) };
      },
    }),
  ];
}
