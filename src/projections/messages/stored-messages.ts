import { typedEvent } from '../../domain/recorded.js';
import { sessionStream, type NetworkMessage } from '../../domain/session/events.js';
import type { DocumentStore } from '../../infra/docstore/port.js';
import type { EventStore } from '../../infra/eventstore/port.js';
import { MESSAGES, type MessageDoc } from './message-doc.js';
import { MESSAGE_EVENTS, messagesOf } from './messages-projection.js';

const MESSAGE_TYPES = new Set<string>(MESSAGE_EVENTS);

/** The model follows the log: what was stored a moment ago is looked for among the newest events. */
const RECENT = 500;

/**
 * A session's stored messages as the network carried them (every field, media keys included),
 * for the driver (a recipient's retry request, a quoted reply, a forward) and media downloads by
 * id: the messages model says which event of the session's stream carries the message, and one
 * read of the stream finds it. Contents past retention are gone from the log, and so then is the
 * answer.
 */
export class StoredMessages {
  constructor(
    private readonly docs: DocumentStore,
    private readonly events: EventStore,
  ) {}

  /** The message `messageId` of `chat` (phone jid, group jid or LID); of any chat when none is named. */
  async find(instanceId: string, messageId: string, chat?: string): Promise<NetworkMessage | undefined> {
    const matches = (m: NetworkMessage) => m.id === messageId && (chat === undefined || m.chat === chat || m.chat_lid === chat);
    const docs = await this.docs.collection<MessageDoc>(MESSAGES).find({ instance_id: instanceId, message_id: messageId }, { limit: 10 });
    for (const doc of docs) {
      if (doc.revision === undefined || (chat !== undefined && doc.chat_jid !== chat && doc.chat_lid !== chat)) continue;
      const [event] = await this.events.readStream(sessionStream(instanceId), { fromRevision: BigInt(doc.revision), maxCount: 1 });
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
