import type { NetworkMessage } from '../../domain/session/events.js';
import type { RecordedEvent } from '../../domain/recorded.js';
import { idOfStream } from '../../domain/streams.js';
import type { DocumentStore, Update, WriteOp } from '../../infra/docstore/port.js';
import { phoneOf } from '../chats/lid-merge.js';
import { occurredAt, type Projection } from '../projection.js';
import { CHANGES, contentOfMessage, contentOfOutgoing, type Content } from './message-content.js';
import { MESSAGES, messageDocId, orderOf, personKey, STATUS_RANK, type MessageDoc } from './message-doc.js';
import { wordsOf } from './words.js';
import { rekeyOldLayout } from './rekey-old-layout.js';

export const MESSAGE_EVENTS = ['MessageSent', 'MessageReceived', 'HistorySyncReceived'] as const;

/** The messages a stored event carries. */
export function messagesOf(event: RecordedEvent): NetworkMessage[] {
  switch (event.type) {
    case 'MessageSent':
    case 'MessageReceived':
      return [event.data.message];
    case 'HistorySyncReceived':
      return event.data.messages;
    default:
      return [];
  }
}

const RECEIPT_RANK = { Delivered: STATUS_RANK.delivered, Read: STATUS_RANK.read, Played: STATUS_RANK.played } as const;
/** What a deletion for everyone takes away: the message then reads as deleted, as on the phones. */
const CONTENTS = { text: '', caption: '', edited_text: '', media: '', words: '', contents: '' };

/**
 * The conversations: one document per message of every chat (incoming and outgoing, from the
 * API, the phone, the helpdesk, history sync, and sends still scheduled or queued), kept current
 * by receipts, reactions, edits, deletions and poll votes. Every write is a MongoDB update that
 * gives the same document when applied twice. Changes to a message the model does not hold (it
 * came before the log begins) are dropped.
 */
export const messagesProjection: Projection = {
  name: 'messages',
  eventTypes: new Set([...MESSAGE_EVENTS, 'ReceiptReceived', 'SendScheduled', 'SendQueued', 'SendCanceled', 'SendAbandoned']),
  async setup(docs: DocumentStore) {
    const messages = docs.collection<MessageDoc>(MESSAGES);
    // A model stored with `_id` `<instance>|<chat>|<order>` (before by_chat) pages wrongly now:
    // its messages move to today's `_id`s before the indexes are declared.
    await rekeyOldLayout(docs);
    await messages.createIndex({ name: 'by_message', keys: { instance_id: 1, message_id: 1, chat_jid: 1 }, unique: true });
    // A chat's page: its messages in `_id` order; on the embedded store a run of ids per chat.
    await messages.createIndex({ name: 'by_chat', keys: { instance_id: 1, chat_jid: 1 }, grouped: true });
    await messages.createIndex({ name: 'search', keys: { instance_id: 1 }, text: 'words' });
    // The retention sweep reads the oldest messages that still hold contents, oldest first.
    await messages.createIndex({ name: 'contents_by_time', keys: { timestamp_ms: 1 }, partialFilterExpression: { contents: true } });
  },
  apply(event) {
    const instanceId = idOfStream(event.streamId);
    // A send is this account's: its id is ours, whatever chat it goes to.
    const one = (messageId: string, update: Update): WriteOp => ({ collection: MESSAGES, op: 'updateMany', filter: { instance_id: instanceId, message_id: messageId, from_me: true }, update });
    const pending = (messageId: string, chat: string, content: Content, rank: number, extra: Record<string, unknown>): WriteOp => {
      const order = orderOf(Math.floor(Date.parse(occurredAt(event)) / 1000), event.position, 0);
      return {
        collection: MESSAGES,
        op: 'updateOne',
        filter: { instance_id: instanceId, message_id: messageId, from_me: true },
        update: {
          $set: { ...content, ...extra },
          $max: { status_rank: rank },
          $setOnInsert: { _id: messageDocId(instanceId, order), chat_jid: chat, sender_jid: '', sender_phone: '', push_name: '', timestamp_ms: Date.parse(occurredAt(event)) },
        },
        upsert: true,
      };
    };
    switch (event.type) {
      case 'SendScheduled':
        return [pending(event.data.message_id, event.data.to, contentOfOutgoing(event.data.content), STATUS_RANK.scheduled, { send_at: event.data.send_at })];
      case 'SendQueued':
        return [pending(event.data.message_id, event.data.to, contentOfOutgoing(event.data.content), STATUS_RANK.queued, {})];
      case 'SendCanceled':
        return [one(event.data.message_id, { $max: { status_rank: STATUS_RANK.canceled } })];
      case 'SendAbandoned':
        return [one(event.data.message_id, { $max: { status_rank: STATUS_RANK.failed }, $set: { error: { ...(event.data.code !== undefined ? { code: event.data.code } : {}), reason: event.data.reason } } })];
      case 'ReceiptReceived': {
        const d = event.data;
        if (d.state === 'Failed') {
          const error = d.error ?? { reason: 'refused by the network' };
          return d.message_ids.map((id) => one(id, { $max: { status_rank: STATUS_RANK.failed }, $set: { error } }));
        }
        if (d.state === 'ReadSelf') return [];
        const rank = RECEIPT_RANK[d.state];
        return d.message_ids.map((id) => one(id, { $max: { status_rank: rank } }));
      }
      default: {
        return messagesOf(event).map((m, index) => (CHANGES.has(m.type) ? change(instanceId, m) : stored(instanceId, m, event, index))).filter((op): op is WriteOp => op !== null);
      }
    }
  },
};

/**
 * A message as an event carries it: the document made, or brought up to date (history may carry it
 * again). A message is its chat's and its id's: an id is unique within its chat only, and anyone
 * may send a message under the id of one of another chat, which must not touch that one.
 */
function stored(instanceId: string, m: NetworkMessage, event: RecordedEvent, index: number): WriteOp {
  const order = orderOf(m.timestamp_s, event.position, index);
  const sender = m.sender_pn ?? m.sender;
  return {
    collection: MESSAGES,
    op: 'updateOne',
    // Our own ids are ours in every chat: a send scheduled to a phone jid that went out to a LID is one message.
    filter: m.from_me ? { instance_id: instanceId, message_id: m.id, from_me: true } : { instance_id: instanceId, message_id: m.id, chat_jid: m.chat, from_me: false },
    update: {
      $set: {
        ...contentOfMessage(m),
        ...(m.chat_lid ? { chat_lid: m.chat_lid } : {}),
        sender_jid: m.sender,
        sender_phone: phoneOf(sender),
        push_name: m.push_name ?? '',
        timestamp_ms: m.timestamp_s * 1000,
        revision: Number(event.revision),
      },
      $setOnInsert: { _id: messageDocId(instanceId, order), ...(m.from_me ? { chat_jid: m.chat } : {}) },
      ...(m.from_me ? { $max: { status_rank: STATUS_RANK.sent } } : {}),
    },
    upsert: true,
  };
}

/**
 * A reaction, edit, deletion or vote: a change of the message it names, in its chat. Only an
 * author edits a message; a deletion by someone else is of their own message (a group admin's
 * deletion of another member's comes from this account, from_me).
 */
function change(instanceId: string, m: NetworkMessage): WriteOp | null {
  const chats = [...new Set([m.chat, m.chat_lid].filter((c): c is string => !!c))];
  const target = (messageId: string, update: Update, also: Record<string, unknown> = {}): WriteOp => ({
    collection: MESSAGES,
    op: 'updateMany',
    filter: { instance_id: instanceId, message_id: messageId, chat_jid: { $in: chats }, ...also },
    update,
  });
  if (m.type === 'reaction' && m.reaction) {
    const field = `reactions.${personKey(m.sender)}`;
    return target(m.reaction.message_id, m.reaction.text === '' ? { $unset: { [field]: '' } } : { $set: { [field]: { emoji: m.reaction.text, sender_jid: m.sender } } });
  }
  if (m.type === 'edit' && m.edit) {
    const text = m.text ?? '';
    const words = wordsOf(text);
    const update: Update = { $set: { edited_text: text, edited_at: new Date(m.timestamp_s * 1000).toISOString(), ...(words.length > 0 ? { words } : {}) } };
    if (words.length === 0) update.$unset = { words: '' };
    return target(m.edit.message_id, update, { from_me: m.from_me, ...(m.from_me ? {} : { sender_jid: m.sender }) });
  }
  if (m.type === 'revoke' && m.revoke) return target(m.revoke.message_id, { $set: { revoked: true }, $unset: CONTENTS }, m.from_me ? {} : { from_me: false, sender_jid: m.sender });
  if (m.type === 'poll_vote' && m.poll_vote?.selected_options) {
    // One voter, one entry: a changed vote replaces the earlier one.
    const voter = m.sender;
    return target(m.poll_vote.poll_message_id, { $set: { [`votes.${personKey(voter)}`]: { voter_jid: voter, options: m.poll_vote.selected_options } } });
  }
  return null;
}
