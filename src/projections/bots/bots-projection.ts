import type { BotSettings } from '../../domain/bots/events.js';
import type { Document, DocumentStore } from '../../infra/docstore/port.js';
import { idOfStream } from '../../domain/streams.js';
import { occurredAt, type Projection } from '../projection.js';

export const BOTS = 'bots';

/** One bot of an instance; its API key stays sealed (the answer shows the masked form). */
export interface BotDoc extends Document {
  /** `<instance>:<bot>` */
  _id: string;
  instance_id: string;
  bot_id: string;
  settings: BotSettings;
  api_key_sealed: string | null;
  api_key_masked: string | null;
  created_at: string;
  updated_at: string;
}

export const botId = (instanceId: string, bot: string) => `${instanceId}:${bot}`;

export const botsProjection: Projection = {
  name: 'bots',
  eventTypes: new Set(['BotConfigured', 'BotRemoved']),

  async setup(docs: DocumentStore) {
    await docs.collection(BOTS).createIndex({ name: 'instance', keys: { instance_id: 1 } });
  },

  apply(event) {
    const instanceId = idOfStream(event.streamId);
    switch (event.type) {
      case 'BotConfigured': {
        const d = event.data;
        const at = occurredAt(event);
        return [
          {
            collection: BOTS,
            op: 'updateOne',
            filter: { _id: botId(instanceId, d.bot_id) },
            update: {
              $set: { instance_id: instanceId, bot_id: d.bot_id, settings: d.settings, api_key_sealed: d.api_key_sealed, api_key_masked: d.api_key_masked, updated_at: at },
              $setOnInsert: { created_at: at },
            },
            upsert: true,
          },
        ];
      }
      case 'BotRemoved':
        return [{ collection: BOTS, op: 'deleteOne', filter: { _id: botId(instanceId, event.data.bot_id) } }];
      default:
        return [];
    }
  },
};
