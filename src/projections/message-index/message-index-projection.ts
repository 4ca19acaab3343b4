import type { NetworkMessage } from '../../domain/session/events.js';
import type { RecordedEvent } from '../../domain/recorded.js';
import { idOfStream } from '../../domain/streams.js';
import type { Document, DocumentStore, WriteOp } from '../../infra/docstore/port.js';
import type { Projection } from '../projection.js';

export const MESSAGE_INDEX = 'message_index';

/** Where one message of a session is: the revision, in the session's stream, of the newest event carrying it. */
export interface MessageIndexDoc extends Document {
  instance_id: string;
  /** The chat as the event names it: its phone jid, group jid, or LID (a LID chat has a document under each). */
  chat: string;
  message_id: string;
  revision: number;
}

export const messageIndexKey = (instanceId: string, chat: string, messageId: string) => `${instanceId}/${chat}/${messageId}`;

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

/**
 * The stored messages of every session, by chat and id, pointing into the session's stream: a
 * recipient's retry request (Baileys' getMessage names the chat and the id), a quoted reply and a
 * read receipt find their message with one read, however long the stream has grown. Messages
 * are told apart by chat as the network tells them apart: an id is unique within its chat only.
 */
export const messageIndexProjection: Projection = {
  name: 'message-index',
  eventTypes: new Set(MESSAGE_EVENTS),
  async setup(docs: DocumentStore) {
    await docs.collection(MESSAGE_INDEX).createIndex({ name: 'by_message', keys: { instance_id: 1, message_id: 1 } });
  },
  apply(event) {
    const instanceId = idOfStream(event.streamId);
    const revision = Number(event.revision);
    const ops: WriteOp[] = [];
    for (const message of messagesOf(event)) {
      for (const chat of new Set([message.chat, message.chat_lid].filter((c): c is string => !!c))) {
        const _id = messageIndexKey(instanceId, chat, message.id);
        const doc: MessageIndexDoc = { _id, instance_id: instanceId, chat, message_id: message.id, revision };
        ops.push({ collection: MESSAGE_INDEX, op: 'replaceOne', filter: { _id }, doc, upsert: true });
      }
    }
    return ops;
  },
};
