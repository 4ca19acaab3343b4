import type { Document } from '../../infra/docstore/port.js';

export const MESSAGES = 'messages';

/** Status ranks: a status never goes back (a late Delivered after Read changes nothing); failed and canceled end it. */
export const STATUS_RANK = { scheduled: 1, queued: 2, sent: 3, delivered: 4, read: 5, played: 6, failed: 100, canceled: 101 } as const;
export type MessageStatus = keyof typeof STATUS_RANK;

export const MESSAGE_KINDS = ['text', 'image', 'video', 'audio', 'document', 'sticker', 'location', 'contact', 'poll', 'list', 'buttons', 'reaction', 'other'] as const;
export type MessageKind = (typeof MESSAGE_KINDS)[number];

export interface MediaSummary {
  mimetype: string;
  file_length: number;
  file_name?: string;
  seconds?: number;
  voice?: boolean;
}

/**
 * One message of a chat, incoming or outgoing, as it stands now. `_id` orders an instance's
 * messages: `<instance>|<order>`, where `order` is the message's time then where the log first
 * carried it (messages of one second keep log order). A chat's page is its messages (index
 * by_chat, grouped on the embedded store) below an `_id`, newest first; a search reads a word's
 * messages in the same order. Short, as every index entry and run of ids holds it.
 */
export interface MessageDoc extends Document {
  _id: string;
  instance_id: string;
  message_id: string;
  chat_jid: string;
  chat_lid?: string;
  /** Revision, in `session-<instance>`, of the newest event carrying the message: the driver reads it back from there. */
  revision?: number;
  from_me: boolean;
  sender_jid: string;
  sender_phone: string;
  push_name: string;
  timestamp_ms: number;
  kind: MessageKind;
  text?: string;
  caption?: string;
  /** An edit's new text (or caption, for media): what the message reads as. */
  edited_text?: string;
  edited_at?: string;
  media?: MediaSummary;
  location?: { latitude: number; longitude: number; name?: string; address?: string };
  contacts?: Array<{ display_name: string; vcard: string }>;
  poll?: { name: string; selectable_count: number; options: string[] };
  reply_to?: string;
  mentions?: string[];
  /** By sender (key: the jid with dots made underscores, field names may not hold dots): their emoji. */
  reactions?: Record<string, { emoji: string; sender_jid: string }>;
  /** By voter, as reactions: the options they chose (none: withdrawn). */
  votes?: Record<string, { voter_jid: string; options: string[] }>;
  revoked?: boolean;
  status_rank?: number;
  error?: { code?: number; reason: string };
  send_at?: string;
  /** Words of the text or caption, for search (gone with the contents). */
  words?: string[];
  /** The text, caption or media are still held: the retention sweep has not reached it. */
  contents?: true;
}

/** Field names may not hold dots (MongoDB reads them as paths): a jid's dots become underscores. */
export const personKey = (jid: string) => jid.replace(/\./g, '_');

/** Fixed-width base 36: orders as the number does, in fewer characters (`_id` is in every index entry). */
const pad = (n: number | bigint, width: number) => n.toString(36).padStart(width, '0');
/**
 * Base 36 after its count of digits ('1'..'9', then ':' '; '<' '=' for 10 to 13): orders as the
 * number does in as few characters as it needs. A log position is a few digits where a fixed
 * width took 13; ids of a word's run then share all but their last few bytes (id-groups.ts).
 */
const sized = (n: number | bigint) => {
  const digits = n.toString(36);
  return `${String.fromCharCode(48 + digits.length)}${digits}`;
};
/** The time (seconds) and where the log first carried the message: `<time>.<position><index>`. */
export const orderOf = (timestampS: number, position: bigint, index: number) => `${pad(Math.max(0, timestampS), 7)}.${sized(position)}${sized(index)}`;
export const messageDocId = (instanceId: string, order: string) => `${instanceId}|${order}`;
/** The `_id` range of an instance's messages, below the message `below` (its `_id`) when given. */
export const instanceRange = (instanceId: string, below?: string) => ({ $gt: `${instanceId}|`, $lt: below ?? `${instanceId}|~` });
/** The `_id` of a message stored before it was `<instance>|<order>`: `<instance>|<chat>|<order>` (see setup). */
export const isOldLayoutId = (id: string) => id.includes('@');
