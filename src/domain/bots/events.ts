import { Type, type Static } from '@sinclair/typebox';

/** An instance's bots, on a stream of their own beside the instance's. */
export const botsStream = (instanceId: string) => `bots-${instanceId}`;

/**
 * One conversation of one bot with one contact (or group): small, so a runner deciding on it reads
 * little. The instance is in every event's metadata (history finds it there).
 */
export const botConversationStream = (instanceId: string, botId: string, jid: string) => `botchat-${instanceId}:${botId}:${jid}`;

const Trigger = Type.Object({
  type: Type.Union([Type.Literal('all'), Type.Literal('keyword'), Type.Literal('regex')]),
  value: Type.Optional(Type.String()),
});

/** What an integrator chooses; the API key is never here (sealed beside it). */
export const BotSettings = Type.Object({
  kind: Type.Union([Type.Literal('typebot'), Type.Literal('openai')]),
  enabled: Type.Boolean(),
  trigger: Trigger,
  scope: Type.Union([Type.Literal('contacts'), Type.Literal('groups'), Type.Literal('both')]),
  ignore_jids: Type.Array(Type.String()),
  expire_minutes: Type.Integer({ minimum: 1 }),
  stop_keyword: Type.Union([Type.String(), Type.Null()]),
  pause_on_human: Type.Boolean(),
  delay_ms: Type.Integer({ minimum: 0 }),
  url: Type.String(),
  /** Typebot: the public id of the flow. */
  typebot: Type.Optional(Type.String()),
  /** OpenAI-compatible. */
  model: Type.Optional(Type.String()),
  system_prompt: Type.Optional(Type.String()),
  max_history: Type.Optional(Type.Integer({ minimum: 0 })),
  /** OpenAI-compatible: a contact's image goes to the model as an image part (absent in older events: off). */
  vision: Type.Optional(Type.Boolean()),
});
export type BotSettings = Static<typeof BotSettings>;

const BotConfigured = Type.Object({
  bot_id: Type.String(),
  settings: BotSettings,
  api_key_sealed: Type.Union([Type.String(), Type.Null()]),
  api_key_masked: Type.Union([Type.String(), Type.Null()]),
});
export type BotConfiguredData = Static<typeof BotConfigured>;

const BotRemoved = Type.Object({ bot_id: Type.String() });

/** What the bot answered, as the runner sends it: each goes out under its message id, once. */
const BotAnswer = Type.Object({
  message_id: Type.String(),
  kind: Type.Union([Type.Literal('text'), Type.Literal('image'), Type.Literal('video'), Type.Literal('audio')]),
  text: Type.String({ description: 'the text, or the media URL' }),
});
export type BotAnswer = Static<typeof BotAnswer>;

/** Every conversation event says when it happened (ISO): inactivity is counted from the last one. */
const conversationKey = { bot_id: Type.String(), jid: Type.String(), at: Type.String() };

const BotConversationStarted = Type.Object({ ...conversationKey, message_id: Type.String() });
/** A message of the contact and the bot's answers to it (the runner sends them from the log). */
const BotExchanged = Type.Object({
  ...conversationKey,
  message_id: Type.String(),
  text: Type.String(),
  answers: Type.Array(BotAnswer),
  /** Typebot's chat session, continued by the next message. */
  bot_session: Type.Union([Type.String(), Type.Null()]),
  /** The options the bot offered (a Typebot choice input), numbered in the answer: "2" picks the second. */
  choices: Type.Array(Type.String()),
});
const BotConversationPaused = Type.Object({
  ...conversationKey,
  by: Type.Union([Type.Literal('human'), Type.Literal('operator')]),
  /** The human's message that paused it. */
  message_id: Type.Union([Type.String(), Type.Null()]),
});
const BotConversationResumed = Type.Object({ ...conversationKey });
const BotConversationExpired = Type.Object({ ...conversationKey, idle_minutes: Type.Integer() });
const BotConversationStopped = Type.Object({ ...conversationKey, message_id: Type.String(), reason: Type.Literal('keyword') });
/** The bot's server failed to answer a message; it is retried with back-off (attempt counts from 1). */
const BotServerFailed = Type.Object({ ...conversationKey, message_id: Type.String(), attempt: Type.Integer(), error: Type.String(), gave_up: Type.Boolean() });

export const BotEventSchemas = {
  BotConfigured,
  BotRemoved,
  BotConversationStarted,
  BotExchanged,
  BotConversationPaused,
  BotConversationResumed,
  BotConversationExpired,
  BotConversationStopped,
  BotServerFailed,
} as const;

type Data<K extends keyof typeof BotEventSchemas> = Static<(typeof BotEventSchemas)[K]>;
export type BotsEvent = { type: 'BotConfigured'; data: Data<'BotConfigured'> } | { type: 'BotRemoved'; data: Data<'BotRemoved'> };
export type BotConversationEvent = {
  [K in Exclude<keyof typeof BotEventSchemas, 'BotConfigured' | 'BotRemoved'>]: { type: K; data: Data<K> };
}[Exclude<keyof typeof BotEventSchemas, 'BotConfigured' | 'BotRemoved'>];
export type BotConversationEventData<K extends BotConversationEvent['type']> = Data<K>;
