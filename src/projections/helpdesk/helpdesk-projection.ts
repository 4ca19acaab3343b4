import type { HelpdeskSettings } from '../../domain/helpdesk/events.js';
import type { Document, DocumentStore } from '../../infra/docstore/port.js';
import { occurredAt, type Projection } from '../projection.js';
import { idOfStream } from '../../domain/streams.js';

export const HELPDESKS = 'helpdesks';

/** One instance's helpdesk configuration; secrets stay sealed, the callback path is a hash. */
export interface HelpdeskDoc extends Document, HelpdeskSettings {
  _id: string;
  config_id: string;
  token_sealed: string;
  token_masked: string;
  inbox_id: number | null;
  inbox_identifier: string;
  inbox_secret_sealed: string | null;
  callback_generation: number;
  callback_path_hash: string;
  created_at: string;
  updated_at: string;
}

export const helpdeskProjection: Projection = {
  name: 'helpdesk',
  eventTypes: new Set(['HelpdeskConfigured', 'HelpdeskRemoved']),

  async setup(docs: DocumentStore) {
    await docs.collection(HELPDESKS).createIndex({ name: 'callback_path_hash', keys: { callback_path_hash: 1 }, unique: true });
  },

  apply(event) {
    const instanceId = idOfStream(event.streamId);
    switch (event.type) {
      case 'HelpdeskConfigured': {
        const d = event.data;
        const at = occurredAt(event);
        return [
          {
            collection: HELPDESKS,
            op: 'updateOne',
            filter: { _id: instanceId },
            update: {
              $set: {
                ...d.settings,
                config_id: d.config_id,
                token_sealed: d.token_sealed,
                token_masked: d.token_masked,
                inbox_id: d.inbox_id,
                inbox_identifier: d.inbox_identifier,
                inbox_secret_sealed: d.inbox_secret_sealed,
                callback_generation: d.callback_generation,
                callback_path_hash: d.callback_path_hash,
                updated_at: at,
              },
              $setOnInsert: { created_at: at },
            },
            upsert: true,
          },
        ];
      }
      case 'HelpdeskRemoved':
        return [{ collection: HELPDESKS, op: 'deleteOne', filter: { _id: instanceId } }];
      default:
        return [];
    }
  },
};
