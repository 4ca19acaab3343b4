import type { Document, DocumentStore, WriteOp } from '../../infra/docstore/port.js';
import type { RecordedEvent } from '../../domain/recorded.js';
import type { Projection } from '../projection.js';

export const BOT_SESSIONS = 'bot_sessions';

export type BotSessionStatus = 'active' | 'paused' | 'expired' | 'stopped';

/** One bot's conversation with one contact, as the sessions route lists it. */
export interface BotSessionDoc extends Document {
  /** `<instance>:<bot>:<jid>` */
  _id: string;
  instance_id: string;
  bot_id: string;
  jid: string;
  status: BotSessionStatus;
  started_at: string;
  last_activity_at: string;
  exchanges: number;
  paused_by: 'human' | 'operator' | null;
  /** The bot's server failing to answer, until an answer gets through. */
  last_error: string | null;
  last_error_at: string | null;
  failures: number;
}

const key = (instanceId: string, botId: string, jid: string) => `${instanceId}:${botId}:${jid}`;

/** The instance a conversation's stream (`botchat-<instance>:<bot>:<jid>`) belongs to. */
function instanceOf(event: RecordedEvent): string {
  if (typeof event.metadata.instanceId === 'string') return event.metadata.instanceId;
  const rest = event.streamId.slice(event.streamId.indexOf('-') + 1);
  return rest.slice(0, rest.indexOf(':'));
}

export const botSessionsProjection: Projection = {
  name: 'bot-sessions',
  eventTypes: new Set([
    'BotConversationStarted',
    'BotExchanged',
    'BotConversationPaused',
    'BotConversationResumed',
    'BotConversationExpired',
    'BotConversationStopped',
    'BotServerFailed',
    'BotRemoved',
  ]),

  async setup(docs: DocumentStore) {
    await docs.collection(BOT_SESSIONS).createIndex({ name: 'bot', keys: { instance_id: 1, bot_id: 1, last_activity_at: -1 } });
  },

  apply(event): WriteOp[] {
    if (event.type === 'BotRemoved') {
      const instanceId = event.streamId.slice(event.streamId.indexOf('-') + 1);
      return [{ collection: BOT_SESSIONS, op: 'deleteMany', filter: { instance_id: instanceId, bot_id: event.data.bot_id } }];
    }
    if (!('jid' in event.data) || !('at' in event.data)) return [];
    const { bot_id, jid, at } = event.data;
    const instanceId = instanceOf(event);
    const filter = { _id: key(instanceId, bot_id, jid) };
    const set = (fields: Partial<BotSessionDoc>): WriteOp => ({ collection: BOT_SESSIONS, op: 'updateOne', filter, update: { $set: fields } });
    switch (event.type) {
      case 'BotConversationStarted': {
        const doc: BotSessionDoc = { _id: filter._id, instance_id: instanceId, bot_id, jid, status: 'active', started_at: at, last_activity_at: at, exchanges: 0, paused_by: null, last_error: null, last_error_at: null, failures: 0 };
        return [{ collection: BOT_SESSIONS, op: 'replaceOne', filter, doc, upsert: true }];
      }
      case 'BotExchanged':
        return [{ collection: BOT_SESSIONS, op: 'updateOne', filter, update: { $set: { last_activity_at: at, last_error: null, last_error_at: null }, $inc: { exchanges: 1 } } }];
      case 'BotConversationPaused':
        return [set({ status: 'paused', paused_by: event.data.by, last_activity_at: at })];
      case 'BotConversationResumed':
        return [set({ status: 'active', paused_by: null, last_activity_at: at })];
      case 'BotConversationExpired':
        return [set({ status: 'expired' })];
      case 'BotConversationStopped':
        return [set({ status: 'stopped', last_activity_at: at })];
      case 'BotServerFailed':
        // A first message the server failed on shows too: the conversation is being started.
        return [
          {
            collection: BOT_SESSIONS,
            op: 'updateOne',
            filter,
            update: {
              $set: { last_error: event.data.error, last_error_at: at },
              $inc: { failures: 1 },
              $setOnInsert: { instance_id: instanceId, bot_id, jid, status: 'active', started_at: at, last_activity_at: at, exchanges: 0, paused_by: null },
            },
            upsert: true,
          },
        ];
      default:
        return [];
    }
  },
};
