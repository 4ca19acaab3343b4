import { invalidInput, notFound } from '../../domain/errors.js';
import type { DocumentStore, Filter } from '../../infra/docstore/port.js';
import { CHATS } from '../chats/chats-projection.js';
import { LID_MAP } from '../groups/groups-projection.js';
import { instanceRange, MESSAGES, STATUS_RANK, type MessageDoc, type MessageKind, type MessageStatus } from './message-doc.js';
import { wordsOf } from './words.js';

const STATUS_OF = new Map<number, MessageStatus>(Object.entries(STATUS_RANK).map(([s, r]) => [r, s as MessageStatus]));

/** CONTRACT's Message. */
export interface Message {
  message_id: string;
  chat_jid: string;
  from_me: boolean;
  sender_jid: string;
  sender_phone: string;
  push_name: string;
  timestamp: string;
  kind: MessageKind;
  text?: string;
  caption?: string;
  media?: MessageDoc['media'];
  location?: MessageDoc['location'];
  contacts?: MessageDoc['contacts'];
  poll?: { name: string; selectable_count: number; options: Array<{ name: string; votes: number }> };
  reply_to?: string;
  mentions?: string[];
  reactions: Array<{ emoji: string; sender_jid: string }>;
  edited_at?: string;
  revoked: boolean;
  status?: MessageStatus;
  error?: { code?: number; reason: string };
  send_at?: string;
}

export interface MessagePage {
  messages: Message[];
  next_before: string | null;
}

export interface SearchRequest {
  q: string;
  chat?: string;
  fromMs?: number;
  toMs?: number;
  before?: string;
  limit: number;
}

/** The conversations read model's answers: a chat's page, a message by id, a search. */
export class MessageQueries {
  constructor(private readonly docs: DocumentStore) {}

  private get messages() {
    return this.docs.collection<MessageDoc>(MESSAGES);
  }

  /** An id is unique within its chat only: the instance's own message first, else the newest of that id. */
  async byId(instanceId: string, messageId: string): Promise<Message | null> {
    const docs = await this.messages.find({ instance_id: instanceId, message_id: messageId }, { limit: 10 });
    const [doc] = docs.sort((a, b) => Number(b.from_me) - Number(a.from_me) || (a._id < b._id ? 1 : -1));
    return doc ? present(doc) : null;
  }

  /**
   * A chat's messages, newest first, before the message `before` when given. A person known by
   * phone number and by LID is one chat: the messages kept under either are read together.
   */
  async page(instanceId: string, jid: string, limit: number, before?: string): Promise<MessagePage> {
    const names = await this.namesOf(instanceId, jid);
    let below: string | undefined;
    if (before !== undefined) {
      const candidates = await this.messages.find({ instance_id: instanceId, message_id: before }, { limit: 10 });
      const from = candidates.find((doc) => names.includes(doc.chat_jid));
      if (!from) throw invalidInput('before', `message ${before} is not a message of chat ${jid}`);
      below = from._id;
    }
    const parts = await Promise.all(
      names.map((chat) => this.messages.find({ instance_id: instanceId, chat_jid: chat, _id: instanceRange(instanceId, below) }, { sort: { _id: -1 }, limit: limit + 1 })),
    );
    const docs = parts.length === 1 ? (parts[0] ?? []) : merged(parts);
    if (docs.length === 0 && before === undefined && !(await this.knowsChat(instanceId, names))) throw notFound(`chat ${jid} not found`);
    return pageOf(docs, limit);
  }

  /** Messages whose text or caption holds every word of `q`, newest first. */
  async search(instanceId: string, request: SearchRequest): Promise<MessagePage> {
    const words = wordsOf(request.q);
    if (words.length === 0) throw invalidInput('q', 'q has no word to search for (letters or digits)');
    const filter: Filter = { instance_id: instanceId, $text: { $search: words.map((w) => `"${w}"`).join(' ') } };
    if (request.chat !== undefined) filter.chat_jid = { $in: await this.namesOf(instanceId, request.chat) };
    const time: Record<string, number> = {};
    if (request.fromMs !== undefined) time.$gte = request.fromMs;
    if (request.toMs !== undefined) time.$lt = request.toMs;
    if (Object.keys(time).length > 0) filter.timestamp_ms = time;
    if (request.before !== undefined) {
      const from = await this.messages.findOne({ instance_id: instanceId, message_id: request.before });
      if (!from) throw invalidInput('before', `message ${request.before} not found`);
      filter._id = instanceRange(instanceId, from._id);
    }
    // `_id` orders an instance's messages by time, and is how the embedded store reads a word's run.
    return pageOf(await this.messages.find(filter, { sort: { _id: -1 }, limit: request.limit + 1 }), request.limit);
  }

  /** The chat's names: the jid asked for and, for a person, the other of phone jid and LID when known. */
  private async namesOf(instanceId: string, jid: string): Promise<string[]> {
    if (jid.endsWith('@lid')) {
      const pair = await this.docs.collection<{ _id: string; pn: string }>(LID_MAP).findOne({ _id: `${instanceId}:${jid}` });
      return pair ? [pair.pn, jid] : [jid];
    }
    if (jid.endsWith('@s.whatsapp.net')) {
      const pair = await this.docs.collection<{ _id: string; lid: string }>(LID_MAP).findOne({ instance_id: instanceId, pn: jid });
      return pair ? [jid, pair.lid] : [jid];
    }
    return [jid];
  }

  private async knowsChat(instanceId: string, names: string[]): Promise<boolean> {
    const chats = this.docs.collection(CHATS);
    for (const name of names) if (await chats.findOne({ _id: `${instanceId}:${name}` })) return true;
    return false;
  }
}

/** Pages of one person's chat under each name, newest first, a message carried under both names once. */
function merged(parts: MessageDoc[][]): MessageDoc[] {
  const seen = new Set<string>();
  return parts
    .flat()
    .sort((a, b) => (a._id < b._id ? 1 : a._id > b._id ? -1 : 0))
    .filter((doc) => !seen.has(doc.message_id) && seen.add(doc.message_id) !== undefined);
}

function pageOf(docs: MessageDoc[], limit: number): MessagePage {
  const shown = docs.slice(0, limit);
  return { messages: shown.map(present), next_before: docs.length > limit ? (shown.at(-1)?.message_id ?? null) : null };
}

export function present(doc: MessageDoc): Message {
  const out: Message = {
    message_id: doc.message_id,
    chat_jid: doc.chat_jid,
    from_me: doc.from_me,
    sender_jid: doc.sender_jid,
    sender_phone: doc.sender_phone,
    push_name: doc.push_name,
    timestamp: new Date(doc.timestamp_ms).toISOString(),
    kind: doc.kind,
    reactions: Object.keys(doc.reactions ?? {})
      .sort()
      .map((k) => doc.reactions![k]!),
    revoked: doc.revoked === true,
  };
  const edited = doc.edited_text;
  if (doc.media) {
    const caption = edited ?? doc.caption;
    if (caption !== undefined) out.caption = caption;
    out.media = doc.media;
  } else {
    const text = edited ?? doc.text;
    if (text !== undefined) out.text = text;
  }
  if (doc.location) out.location = doc.location;
  if (doc.contacts) out.contacts = doc.contacts;
  if (doc.poll) {
    const votes = Object.values(doc.votes ?? {});
    out.poll = {
      name: doc.poll.name,
      selectable_count: doc.poll.selectable_count,
      options: doc.poll.options.map((name) => ({ name, votes: votes.filter((v) => v.options.includes(name)).length })),
    };
  }
  if (doc.reply_to) out.reply_to = doc.reply_to;
  if (doc.mentions) out.mentions = doc.mentions;
  if (doc.edited_at) out.edited_at = doc.edited_at;
  const status = doc.status_rank === undefined ? undefined : STATUS_OF.get(doc.status_rank);
  if (status && doc.from_me) out.status = status;
  if (doc.error) out.error = doc.error;
  if (doc.send_at) out.send_at = doc.send_at;
  return out;
}
