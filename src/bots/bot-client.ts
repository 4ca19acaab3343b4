import type { BotAnswer, BotSettings } from '../domain/bots/events.js';
import type { VisionImage } from './vision-image.js';

/** What a bot's server is asked: the contact's message, in its conversation. */
export interface BotTurnInput {
  settings: BotSettings;
  apiKey: string | null;
  /** A new conversation, or the next message of one. */
  fresh: boolean;
  bot_session: string | null;
  choices: string[];
  text: string;
  /** The contact's image, for a model with vision (the text is then its caption, or the placeholder). */
  image?: VisionImage;
  /** The conversation so far, oldest first (OpenAI-compatible: the context). */
  history: { role: 'user' | 'assistant'; content: string }[];
  contact: { jid: string; name: string; phone: string };
}

/** What the bot answered, before the runner gives each answer its message id. */
export interface BotTurn {
  answers: Omit<BotAnswer, 'message_id'>[];
  bot_session: string | null;
  choices: string[];
}

export interface BotClient {
  turn(input: BotTurnInput): Promise<BotTurn>;
}

/** A flow that answers more than this at once is cut (and logged): a flow that loops costs one turn's worth. */
export const MAX_ANSWERS = 10;
export const MAX_ANSWER_CHARS = 4096;
