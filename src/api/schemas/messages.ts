import { Type } from '@sinclair/typebox';
import { MESSAGE_KINDS, STATUS_RANK } from '../../projections/messages/message-doc.js';
import { Envelope, Nullable } from './common.js';
import { MessageId, Phone } from './messaging.js';

const Str = Type.String();

/** CONTRACT.md, Messages: one message of a chat as it stands now. */
export const Message = Type.Object({
  message_id: Str,
  chat_jid: Str,
  from_me: Type.Boolean(),
  sender_jid: Type.String({ description: 'empty for a send that has not gone out yet' }),
  sender_phone: Type.String({ description: 'digits; empty when the network gave only a LID' }),
  push_name: Type.String({ description: 'the name the sender gave themselves; empty when unknown' }),
  timestamp: Type.String({ format: 'date-time' }),
  kind: Type.Union(MESSAGE_KINDS.map((k) => Type.Literal(k))),
  text: Type.Optional(Type.String({ description: 'as last edited; gone after SESSION_RETENTION_DAYS or a deletion' })),
  caption: Type.Optional(Type.String({ description: 'as last edited; gone after SESSION_RETENTION_DAYS or a deletion' })),
  media: Type.Optional(
    Type.Object({
      mimetype: Str,
      file_length: Type.Integer(),
      file_name: Type.Optional(Str),
      seconds: Type.Optional(Type.Integer()),
      voice: Type.Optional(Type.Boolean()),
    }),
  ),
  location: Type.Optional(Type.Object({ latitude: Type.Number(), longitude: Type.Number(), name: Type.Optional(Str), address: Type.Optional(Str) })),
  contacts: Type.Optional(Type.Array(Type.Object({ display_name: Str, vcard: Str }))),
  poll: Type.Optional(Type.Object({ name: Str, selectable_count: Type.Integer(), options: Type.Array(Type.Object({ name: Str, votes: Type.Integer() })) })),
  reply_to: Type.Optional(Type.String({ description: 'the quoted message' })),
  mentions: Type.Optional(Type.Array(Str)),
  reactions: Type.Array(Type.Object({ emoji: Str, sender_jid: Str })),
  edited_at: Type.Optional(Type.String({ format: 'date-time' })),
  revoked: Type.Boolean(),
  status: Type.Optional(Type.Union(Object.keys(STATUS_RANK).map((s) => Type.Literal(s)), { description: 'own messages only' })),
  error: Type.Optional(Type.Object({ code: Type.Optional(Type.Integer()), reason: Str }, { description: "why it failed: the network's error (e.g. 463) or why a send was given up" })),
  send_at: Type.Optional(Type.String({ format: 'date-time', description: 'a scheduled send: when it goes out' })),
});

export const MessagePage = Envelope(
  Type.Object({
    messages: Type.Array(Message),
    next_before: Nullable(Type.String({ description: 'pass as `before` for the next (older) page; null at the end' })),
  }),
);

const Limit = Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 }));
const Before = Type.Optional({ ...MessageId, description: 'a message_id: the page holds the messages older than it' });

export const ChatMessagesParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }), jid: Phone });
export const ChatMessagesQuery = Type.Object({ before: Before, limit: Limit }, { additionalProperties: false });

export const SearchQuery = Type.Object(
  {
    q: Type.String({ minLength: 1, maxLength: 256, description: 'words the text or caption must all hold (whole words; case and accents ignored)' }),
    chat: Type.Optional(Phone),
    from: Type.Optional(Type.String({ format: 'date-time', description: 'messages at or after this time' })),
    to: Type.Optional(Type.String({ format: 'date-time', description: 'messages before this time' })),
    before: Before,
    limit: Limit,
  },
  { additionalProperties: false },
);
