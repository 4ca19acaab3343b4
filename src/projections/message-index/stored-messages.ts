import { typedEvent } from '../../domain/recorded.js';
import { sessionStream, type NetworkMessage } from '../../domain/session/events.js';
import type { DocumentStore } from '../../infra/docstore/port.js';
import type { EventStore } from '../../infra/eventstore/port.js';
import { MESSAGE_EVENTS, MESSAGE_INDEX, messageIndexKey, messagesOf, type MessageIndexDoc } from './message-index-projection.js';

const MESSAGE_TYPES = new Set<string>(MESSAGE_EVENTS);

/** The index follows the log: what was stored a moment ago is looked for among the newest events. */
const RECENT = 500;

/**
 * A session's stored messages, by chat and id, through the message index: one read of the stream
 * at the revision the index names. Contents past retention are gone from the log, and so then is
 * the answer.
 */
export class StoredMessages {
  constructor(
    private readonly docs: DocumentStore,
    private readonly events: EventStore,
  ) {}

  /** The message `messageId` of `chat` (phone jid, group jid or LID); of any chat when none is named. */
  async find(instanceId: string, messageId: string, chat?: string): Promise<NetworkMessage | undefined> {
    const matches = (m: NetworkMessage) => m.id === messageId && (chat === undefined || m.chat === chat || m.chat_lid === chat);
    const index = this.docs.collection<MessageIndexDoc>(MESSAGE_INDEX);
    const entries = chat
      ? [await index.findOne({ _id: messageIndexKey(instanceId, chat, messageId) })].filter((d): d is MessageIndexDoc => d !== null)
      : await index.find({ instance_id: instanceId, message_id: messageId }, { sort: { revision: -1 }, limit: 5 });
    for (const entry of entries) {
      const [event] = await this.events.readStream(sessionStream(instanceId), { fromRevision: BigInt(entry.revision), maxCount: 1 });
      const found = event ? this.messagesIn(event).find(matches) : undefined;
      if (found) return found;
    }
    const recent = await this.events.readStream(sessionStream(instanceId), { direction: 'backwards', maxCount: RECENT });
    for (const event of recent) {
      const found = this.messagesIn(event).find(matches);
      if (found) return found;
    }
    return undefined;
  }

  private messagesIn(raw: Parameters<typeof typedEvent>[0]): NetworkMessage[] {
    // Most of a session's events carry no message: not worth checking against their schema.
    if (!MESSAGE_TYPES.has(raw.type)) return [];
    const typed = typedEvent(raw);
    return typed.ok ? messagesOf(typed.event) : [];
  }
}
