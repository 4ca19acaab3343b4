import type { Static } from '@sinclair/typebox';
import type { InstanceEventSchemas } from '../../domain/instance/events.js';
import type { SessionEventData } from '../../domain/session/events.js';
import type { Document, DocumentStore, WriteOp } from '../../infra/docstore/port.js';
import type { RecordedEvent } from '../../infra/eventstore/port.js';
import { occurredAt, type Projection } from '../projection.js';

export const INSTANCES = 'instances';

/** The instance read model; session fields are written by the session projection. */
export interface InstanceDoc extends Document {
  _id: string;
  account_id: string;
  name: string;
  token_hash: string;
  webhook: string;
  events_subscribe: string[];
  webhook_secret_sealed: string;
  reject_calls: boolean;
  auto_read_messages: boolean;
  connected: boolean;
  connected_at: string | null;
  whatsapp_push_name: string | null;
  whatsapp_jid: string | null;
  phone: string | null;
  billing_status: string;
  created_at: string;
  updated_at: string;
  cancel_at: string | null;
  expired_at: string | null;
  labels: Record<string, unknown>;
}

type Data<K extends keyof typeof InstanceEventSchemas> = Static<(typeof InstanceEventSchemas)[K]>;

/** Instance and session streams are both keyed by the instance id. */
const instanceId = (event: RecordedEvent) => event.streamId.slice(event.streamId.indexOf('-') + 1);

function set(event: RecordedEvent, fields: Partial<InstanceDoc>, touch = true): WriteOp[] {
  return [
    {
      collection: INSTANCES,
      op: 'updateOne',
      filter: { _id: instanceId(event) },
      update: { $set: touch ? { ...fields, updated_at: occurredAt(event) } : fields },
    },
  ];
}

export const instancesProjection: Projection = {
  name: 'instances',
  eventTypes: new Set([
    'InstanceCreated',
    'InstanceUpdated',
    'WebhookConfigured',
    'WebhookCleared',
    'WebhookSecretRotated',
    'InstanceTokenRotated',
    'InstanceCanceled',
    'SessionConnected',
    'SessionDisconnected',
    'SessionLoggedOut',
    'ProfileUpdated',
  ]),

  async setup(docs: DocumentStore) {
    const instances = docs.collection(INSTANCES);
    await instances.createIndex({ name: 'token_hash', keys: { token_hash: 1 }, unique: true });
    await instances.createIndex({ name: 'account_created', keys: { account_id: 1, created_at: -1 } });
  },

  apply(event) {
    switch (event.type) {
      case 'InstanceCreated': {
        const d = event.data as Data<'InstanceCreated'>;
        const at = occurredAt(event);
        const doc: InstanceDoc = {
          _id: d.instance_id,
          account_id: d.account_id,
          name: d.name,
          token_hash: d.token_hash,
          webhook: '',
          events_subscribe: [],
          webhook_secret_sealed: d.webhook_secret_sealed,
          reject_calls: d.reject_calls,
          auto_read_messages: d.auto_read_messages,
          connected: false,
          connected_at: null,
          whatsapp_push_name: null,
          whatsapp_jid: null,
          phone: null,
          billing_status: d.billing_status,
          created_at: at,
          updated_at: at,
          cancel_at: null,
          expired_at: d.expired_at,
          labels: d.labels,
        };
        return [{ collection: INSTANCES, op: 'replaceOne', filter: { _id: doc._id }, doc, upsert: true }];
      }
      case 'InstanceUpdated':
        return set(event, event.data as Data<'InstanceUpdated'>);
      case 'WebhookConfigured': {
        const d = event.data as Data<'WebhookConfigured'>;
        return set(event, { webhook: d.url, events_subscribe: d.events });
      }
      case 'WebhookCleared':
        return set(event, { webhook: '', events_subscribe: [] });
      case 'WebhookSecretRotated':
        return set(event, { webhook_secret_sealed: (event.data as Data<'WebhookSecretRotated'>).webhook_secret_sealed });
      case 'InstanceTokenRotated':
        return set(event, { token_hash: (event.data as Data<'InstanceTokenRotated'>).token_hash });
      case 'InstanceCanceled': {
        const d = event.data as Data<'InstanceCanceled'>;
        return set(event, { billing_status: 'CANCELED', cancel_at: d.canceled_at });
      }
      // The session's state is not a change to the instance's settings: updated_at stays.
      case 'SessionConnected': {
        const d = event.data as SessionEventData<'SessionConnected'>;
        const fields = { connected: true, connected_at: occurredAt(event), whatsapp_jid: d.jid, phone: d.phone };
        return set(event, d.push_name === undefined ? fields : { ...fields, whatsapp_push_name: d.push_name }, false);
      }
      case 'SessionDisconnected':
        return set(event, { connected: false }, false);
      case 'SessionLoggedOut':
        return set(event, { connected: false, connected_at: null, whatsapp_jid: null, whatsapp_push_name: null, phone: null }, false);
      case 'ProfileUpdated': {
        const d = event.data as SessionEventData<'ProfileUpdated'>;
        return d.push_name === undefined ? [] : set(event, { whatsapp_push_name: d.push_name }, false);
      }
      default:
        return [];
    }
  },
};
