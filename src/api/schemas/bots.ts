import { Type } from '@sinclair/typebox';
import { Envelope, Nullable } from './common.js';

export const BotParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64 }),
  bot_id: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'a name of your choosing, unique in the instance' }),
});

export const BotSessionParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64 }),
  bot_id: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }),
  jid: Type.String({ minLength: 1, maxLength: 128, description: "the contact's jid or phone number (or a group's jid)" }),
});

export const SaveBotBody = Type.Object(
  {
    kind: Type.Union([Type.Literal('typebot'), Type.Literal('openai')]),
    enabled: Type.Optional(Type.Boolean({ default: true })),
    trigger: Type.Optional(
      Type.Object(
        {
          type: Type.Union([Type.Literal('all'), Type.Literal('keyword'), Type.Literal('regex')]),
          value: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'the keyword (found anywhere in the message, any case), or a pattern run on RE2 (linear time)' })),
        },
        { additionalProperties: false, default: { type: 'all' } },
      ),
    ),
    scope: Type.Optional(Type.Union([Type.Literal('contacts'), Type.Literal('groups'), Type.Literal('both')], { default: 'contacts' })),
    ignore_jids: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 128 }), { maxItems: 1000, default: [] })),
    expire_minutes: Type.Optional(Type.Integer({ minimum: 1, maximum: 43_200, default: 60, description: 'inactivity after which a conversation ends' })),
    stop_keyword: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 64, description: 'a message that is exactly this (any case) ends the conversation' }))),
    pause_on_human: Type.Optional(Type.Boolean({ default: true, description: 'an answer the bot did not send (phone, helpdesk, API) pauses the conversation' })),
    delay_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 20_000, default: 1000, description: 'typing shown before each answer' })),
    url: Type.String({ format: 'uri', maxLength: 2048, description: "Typebot: the viewer's base URL; OpenAI-compatible: the API base URL (…/v1)" }),
    typebot: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: "Typebot: the flow's public id" })),
    model: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    api_key: Type.Optional(Type.String({ maxLength: 1024, description: "OpenAI-compatible: the key (stored sealed, answered masked); omitted keeps the current one, '' removes it" })),
    system_prompt: Type.Optional(Type.String({ maxLength: 16_000, default: '' })),
    max_history: Type.Optional(Type.Integer({ minimum: 0, maximum: 100, default: 10, description: "the conversation's last messages given as context" })),
    vision: Type.Optional(
      Type.Boolean({
        default: false,
        description: "OpenAI-compatible: a contact's image (JPEG, PNG, WebP or GIF, at most 5 MB) goes to the model as an image_url part beside its caption; off, or when the image cannot be used, the model reads \"[image]\"",
      }),
    ),
  },
  { additionalProperties: false },
);

export const Bot = Type.Object({
  bot_id: Type.String(),
  kind: Type.Union([Type.Literal('typebot'), Type.Literal('openai')]),
  enabled: Type.Boolean(),
  trigger: Type.Object({ type: Type.String(), value: Type.Optional(Type.String()) }),
  scope: Type.String(),
  ignore_jids: Type.Array(Type.String()),
  expire_minutes: Type.Integer(),
  stop_keyword: Nullable(Type.String()),
  pause_on_human: Type.Boolean(),
  delay_ms: Type.Integer(),
  url: Type.String(),
  typebot: Type.Optional(Type.String()),
  model: Type.Optional(Type.String()),
  api_key_masked: Nullable(Type.String()),
  system_prompt: Type.Optional(Type.String()),
  max_history: Type.Optional(Type.Integer()),
  vision: Type.Optional(Type.Boolean()),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});

export const BotAnswer = Envelope(Bot);
export const BotList = Envelope(Type.Array(Bot));

export const BotSession = Type.Object({
  jid: Type.String(),
  status: Type.Union([Type.Literal('active'), Type.Literal('paused'), Type.Literal('expired'), Type.Literal('stopped')]),
  started_at: Type.String({ format: 'date-time' }),
  last_activity_at: Type.String({ format: 'date-time' }),
  exchanges: Type.Integer(),
  paused_by: Nullable(Type.Union([Type.Literal('human'), Type.Literal('operator')])),
  last_error: Nullable(Type.String({ description: "the bot's server failing to answer (retried with back-off)" })),
  last_error_at: Nullable(Type.String({ format: 'date-time' })),
  failures: Type.Integer(),
});

export const BotSessionsQuery = Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })) }, { additionalProperties: false });
export const BotSessionList = Envelope(Type.Array(BotSession));
export const BotSessionAnswer = Envelope(Nullable(BotSession));
