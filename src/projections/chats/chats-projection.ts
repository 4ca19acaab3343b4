import type { NetworkMessage, SessionEventData } from '../../domain/session/events.js';
import type { Document, DocumentStore, Update, WriteOp } from '../../infra/docstore/port.js';
import type { Projection } from '../projection.js';
import { idOfStream } from '../../domain/streams.js';
import { chatKey as key, mergeOnPair, pairsOf, phoneOf } from './lid-merge.js';

export const CHATS = 'chats';

export interface ChatDoc extends Document {
  _id: string;
  instance_id: string;
  jid: string;
  phone: string;
  name: string;
  last_message_user_name: string;
  last_message_user_phone: string;
  community_name: string;
  community_jid: string;
  archived: boolean;
  pinned: boolean;
  messages_unread: number;
  marked_as_unread: boolean;
  is_marked_spam: boolean;
  is_group: boolean;
  is_group_announcement: boolean;
  last_message_timestamp_ms: number;
  /** Unix ms the mute ends; 0 not muted, -1 forever. */
  mute_end_time: number;
  /**
   * The newest message's key, never shown: archive, read state, clear and delete name it as the
   * range they apply to. Empty when the newest activity came without a message (a chat upsert).
   */
  last_message_id: string;
  last_message_from_me: boolean;
  last_message_sender: string;
  /**
   * The person's LID when known, never shown. A chat first seen under a LID keeps that LID's key
   * (`_id`) after it is folded into the phone jid, so writes addressed by the LID still find it.
   */
  lid?: string;
  /** Label ids of a business account's chat (ChatLabeled); absent until one is set. */
  labels?: string[];
}

type ChatInfo = SessionEventData<'ChatsUpserted'>['chats'][number];
type Changes = SessionEventData<'ChatUpdated'>['changes'];

const isLid = (jid: string) => jid.endsWith('@lid');
/**
 * Which document holds a chat. A LID names its own document; a phone or group jid the one showing
 * that jid, which is a LID's document once the pair folded it (see lid-fold below).
 */
export const chatFilter = (instanceId: string, jid: string) => (isLid(jid) ? { _id: key(instanceId, jid) } : { instance_id: instanceId, jid });

/**
 * The chat list is ours to keep (the network library stores nothing): a reducer over history
 * sync, chat upserts and updates, and messages, written as update operators so that applying
 * the events in log order is all it takes.
 */
/** A chat the list has just heard of: every field present, nothing known yet. */
export function newChat(instanceId: string, jid: string): ChatDoc {
  return { _id: key(instanceId, jid), instance_id: instanceId, jid, ...unknownYet(jid) };
}

/** Every field of a new chat but the three that name it. */
function unknownYet(jid: string) {
  return {
    phone: phoneOf(jid),
    name: '',
    last_message_user_name: '',
    last_message_user_phone: '',
    community_name: '',
    community_jid: '',
    archived: false,
    pinned: false,
    messages_unread: 0,
    marked_as_unread: false,
    is_marked_spam: false,
    is_group: jid.endsWith('@g.us'),
    is_group_announcement: false,
    last_message_timestamp_ms: 0,
    mute_end_time: 0,
    last_message_id: '',
    last_message_from_me: false,
    last_message_sender: '',
  };
}

function ensure(instanceId: string, jid: string): WriteOp {
  // The upsert takes instance_id and jid from the filter, the rest (the _id too) from here; a
  // LID's filter is its _id. Fields in newChat's order: the document is the same either way.
  const fields: Partial<ChatDoc> = isLid(jid) ? { instance_id: instanceId, jid, ...unknownYet(jid) } : { _id: key(instanceId, jid), ...unknownYet(jid) };
  return { collection: CHATS, op: 'updateOne', filter: chatFilter(instanceId, jid), update: { $setOnInsert: fields }, upsert: true };
}

function update(instanceId: string, jid: string, u: Update, extra?: Record<string, unknown>): WriteOp {
  // Filled in place (a fresh filter each time): a rebuild builds several per message.
  const filter: Record<string, unknown> = chatFilter(instanceId, jid);
  if (extra) for (const field in extra) filter[field] = extra[field];
  return { collection: CHATS, op: 'updateOne', filter, update: u };
}

/**
 * Moves the last-message fields forward only: an older message arriving late changes nothing.
 * A message at the same instant as the current one wins (history gives a chat's time, then its
 * messages); a bare timestamp (no message) must be strictly newer and forgets the message key.
 */
function lastMessage(instanceId: string, jid: string, atMs: number): WriteOp {
  const set = { last_message_timestamp_ms: atMs, last_message_id: '', last_message_from_me: false, last_message_sender: '' };
  return update(instanceId, jid, { $set: set }, { last_message_timestamp_ms: { $lt: atMs } });
}

/** The last-message fields a message sets when it is the chat's newest. */
function lastMessageFields(m: NetworkMessage): Record<string, unknown> {
  const sender = m.sender_pn ?? m.sender;
  return {
    last_message_timestamp_ms: m.timestamp_s * 1000,
    last_message_user_name: m.push_name ?? '',
    last_message_user_phone: phoneOf(sender),
    last_message_id: m.id,
    last_message_from_me: m.from_me,
    last_message_sender: m.sender,
  };
}

/** The fields a chat description and a chat change share, as the read model names them. */
function chatFields(c: Pick<ChatInfo, 'name' | 'archived' | 'pinned' | 'mute_end_ms' | 'unread_count' | 'marked_as_unread' | 'is_marked_spam'>): Record<string, unknown> {
  const set: Record<string, unknown> = {};
  if (c.name !== undefined) set.name = c.name;
  if (c.archived !== undefined) set.archived = c.archived;
  if (c.pinned !== undefined) set.pinned = c.pinned;
  if (c.mute_end_ms !== undefined) set.mute_end_time = c.mute_end_ms;
  if (c.unread_count !== undefined) set.messages_unread = Math.max(0, c.unread_count);
  if (c.marked_as_unread !== undefined) set.marked_as_unread = c.marked_as_unread;
  if (c.is_marked_spam !== undefined) set.is_marked_spam = c.is_marked_spam;
  return set;
}

function fromInfo(instanceId: string, c: ChatInfo): WriteOp[] {
  const set = chatFields(c);
  const ops = [ensure(instanceId, c.jid)];
  if (c.community_jid !== undefined) ops.push(...community(instanceId, c.jid, c.community_jid));
  if (Object.keys(set).length > 0) ops.push(update(instanceId, c.jid, { $set: set }));
  if (c.last_message_s !== undefined) ops.push(lastMessage(instanceId, c.jid, c.last_message_s * 1000));
  return ops;
}

/**
 * A chat's community. The name is known only when the community itself was described (now or
 * earlier); a move to another community forgets the old name, staying keeps it.
 */
function community(instanceId: string, jid: string, communityJid: string, name?: string): WriteOp[] {
  return [
    update(instanceId, jid, { $set: { community_name: '' } }, { community_jid: { $ne: communityJid } }),
    update(instanceId, jid, { $set: name === undefined ? { community_jid: communityJid } : { community_jid: communityJid, community_name: name } }),
  ];
}

function fromMessage(instanceId: string, m: NetworkMessage, live: boolean): WriteOp[] {
  // A reaction, an edit or a deletion is not a new message in the chat list's sense.
  if (m.type === 'reaction' || m.type === 'edit' || m.type === 'revoke' || m.type === 'poll_vote') return [];
  const atMs = m.timestamp_s * 1000;
  // A live message counts as unread; writing from this account reads the chat, as the phone shows it.
  const readState: Update | undefined = !live ? undefined : m.from_me ? { $set: { messages_unread: 0, marked_as_unread: false } } : { $inc: { messages_unread: 1 } };
  // The newest message (nearly always) moves the last-message fields and the read state in one
  // write; one older than the chat's newest, arriving late, changes the read state alone.
  const set = lastMessageFields(m);
  const newest: Update = { $set: set };
  if (readState?.$set) Object.assign(set, readState.$set);
  if (readState?.$inc) newest.$inc = readState.$inc;
  const ops = [ensure(instanceId, m.chat), update(instanceId, m.chat, newest, { last_message_timestamp_ms: { $lte: atMs } })];
  if (readState) ops.push(update(instanceId, m.chat, readState, { last_message_timestamp_ms: { $gt: atMs } }));
  if (!m.from_me && !m.is_group && m.push_name) ops.push(update(instanceId, m.chat, { $set: { name: m.push_name } }, { name: '' }));
  return ops;
}

function fromChanges(instanceId: string, jid: string, c: Changes): WriteOp[] {
  if (c.deleted) return [{ collection: CHATS, op: 'deleteOne', filter: chatFilter(instanceId, jid) }];
  const set = chatFields(c);
  if (c.cleared) Object.assign(set, { messages_unread: 0, last_message_user_name: '', last_message_user_phone: '' });
  const ops = [ensure(instanceId, jid)];
  if (Object.keys(set).length > 0) ops.push(update(instanceId, jid, { $set: set }));
  if (c.unread_delta !== undefined && c.unread_count === undefined) ops.push(update(instanceId, jid, { $inc: { messages_unread: c.unread_delta } }));
  if (c.last_message_s !== undefined) ops.push(lastMessage(instanceId, jid, c.last_message_s * 1000));
  return ops;
}

export const chatsProjection: Projection = {
  name: 'chats',
  eventTypes: new Set([
    'HistorySyncReceived',
    'ChatsUpserted',
    'ChatUpdated',
    'MessageReceived',
    'MessageSent',
    'ReceiptReceived',
    'GroupsUpserted',
    'LidMappingLearned',
    'SessionLoggedOut',
    'ChatLabeled',
  ]),

  async setup(docs: DocumentStore) {
    await docs.collection(CHATS).createIndex({ name: 'instance_order', keys: { instance_id: 1, pinned: -1, last_message_timestamp_ms: -1, jid: 1 } });
    // Writes and lookups by phone jid find a folded LID chat through this, not through its _id.
    await docs.collection(CHATS).createIndex({ name: 'instance_jid', keys: { instance_id: 1, jid: 1 } });
  },

  apply(event) {
    const instanceId = idOfStream(event.streamId);
    switch (event.type) {
      case 'HistorySyncReceived': {
        const d = event.data;
        return [
          ...d.messages.flatMap((m) => foldMessagePair(instanceId, m)),
          ...d.chats.flatMap((c) => fromInfo(instanceId, c)),
          ...d.messages.flatMap((m) => fromMessage(instanceId, m, false)),
        ];
      }
      case 'ChatsUpserted':
        return event.data.chats.flatMap((c) => fromInfo(instanceId, c));
      case 'ChatUpdated': {
        const d = event.data;
        return fromChanges(instanceId, d.jid, d.changes);
      }
      case 'MessageReceived': {
        const d = event.data;
        return withPair(instanceId, d.message, fromMessage(instanceId, d.message, d.upsert === 'notify'));
      }
      case 'MessageSent': {
        const m = event.data.message;
        return withPair(instanceId, m, fromMessage(instanceId, m, true));
      }
      case 'LidMappingLearned':
        return event.data.pairs.flatMap((p) => foldLid(instanceId, p.pn, p.lid));
      case 'ReceiptReceived': {
        const d = event.data;
        return d.state === 'ReadSelf' ? [update(instanceId, d.chat, { $set: { messages_unread: 0, marked_as_unread: false } })] : [];
      }
      case 'GroupsUpserted': {
        const groups = event.data.groups;
        const names = new Map(groups.map((g) => [g.jid, g.name]));
        // A community's name reaches the chats of its groups, whenever either was learned first.
        const communities = groups.filter((g) => g.is_community);
        return groups.flatMap((g) => [
          ensure(instanceId, g.jid),
          update(instanceId, g.jid, { $set: { name: g.name, is_group_announcement: g.is_announce } }),
          ...community(instanceId, g.jid, g.community_jid ?? '', g.community_jid ? names.get(g.community_jid) : ''),
        ]).concat(
          communities.map((c) => ({
            collection: CHATS,
            op: 'updateMany' as const,
            filter: { instance_id: instanceId, community_jid: c.jid },
            update: { $set: { community_name: c.name } },
          })),
        );
      }
      case 'SessionLoggedOut':
        return [{ collection: CHATS, op: 'deleteMany', filter: { instance_id: instanceId } }];
      case 'ChatLabeled': {
        const d = event.data;
        const change: Update = d.labeled ? { $addToSet: { labels: d.label_id } } : { $pull: { labels: d.label_id } };
        return [ensure(instanceId, d.chat), update(instanceId, d.chat, change)];
      }
      default:
        return [];
    }
  },

  /**
   * An event that tells a phone↔LID pair may find the person with two chats, one under each id:
   * those become one (lid-merge.ts) before the event's own writes, which then find the one chat.
   */
  reading: {
    needs: (event) => pairsOf(event).length > 0,
    async apply(event, read) {
      const instanceId = idOfStream(event.streamId);
      const merges: WriteOp[] = [];
      for (const { pn, lid } of pairsOf(event)) merges.push(...(await mergeOnPair(instanceId, pn, lid, read, CHATS)));
      return [...merges, ...chatsProjection.apply(event)];
    },
  },
};

/**
 * Lid fold. A person who wrote by LID before the network told the phone↔LID pair has a chat
 * under the LID; once the pair is known, the driver names them by phone jid (CONTRACT.md,
 * "Addresses"). The LID's chat then becomes the phone jid's chat in place, counts, last message
 * and name with it, and later writes by phone jid find it (`chatFilter`). A pure projection
 * cannot read the LID chat's values to add them into a second document, so relabelling in place
 * is how its history survives; re-applied, the writes match nothing new (idempotent).
 */
function foldLid(instanceId: string, pn: string, lid: string): WriteOp[] {
  if (!isLid(lid) || phoneOf(pn) === '') return [];
  return [
    { collection: CHATS, op: 'updateOne', filter: { _id: key(instanceId, lid), jid: lid }, update: { $set: { jid: pn, phone: phoneOf(pn), lid } } },
    { collection: CHATS, op: 'updateMany', filter: { instance_id: instanceId, jid: pn }, update: { $set: { lid } } },
  ];
}

/** A message's writes after the fold of the pair it reveals, if any (nearly every message reveals none). */
function withPair(instanceId: string, m: NetworkMessage, writes: WriteOp[]): WriteOp[] {
  const pair = foldMessagePair(instanceId, m);
  return pair.length === 0 ? writes : pair.concat(writes);
}

/** The pair a 1:1 message reveals: its chat's phone jid beside the chat's LID. */
function foldMessagePair(instanceId: string, m: NetworkMessage): WriteOp[] {
  if (m.is_group || !m.chat_lid) return [];
  return foldLid(instanceId, m.chat, m.chat_lid);
}
