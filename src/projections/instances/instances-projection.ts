import {
  INSTANCE_VIEW_EVENT_TYPES,
  instanceViewChange,
  type InstanceView,
  type InstanceViewEvent,
} from '../../domain/instance/instance-view.js';
import type { Document, DocumentStore, WriteOp } from '../../infra/docstore/port.js';
import type { RecordedEvent } from '../../domain/recorded.js';
import { occurredAt, type Projection } from '../projection.js';
import { idOfStream } from '../../domain/streams.js';

export const INSTANCES = 'instances';

/** The instance read model: the Instance view, keyed by the instance id. */
export interface InstanceDoc extends Document, InstanceView {
  _id: string;
}

/** Instance and session streams are both keyed by the instance id. */

/** True for the events the Instance view folds: the set is the fold's own list of types. */
export const isViewEvent = (event: RecordedEvent): event is RecordedEvent<InstanceViewEvent> => INSTANCE_VIEW_EVENT_TYPES.has(event.type);

export const instancesProjection: Projection = {
  name: 'instances',
  eventTypes: INSTANCE_VIEW_EVENT_TYPES,

  async setup(docs: DocumentStore) {
    const instances = docs.collection(INSTANCES);
    await instances.createIndex({ name: 'token_hash', keys: { token_hash: 1 }, unique: true });
    await instances.createIndex({ name: 'account_created', keys: { account_id: 1, created_at: -1 } });
  },

  /** Writes what the view's fold changes. */
  apply(event): WriteOp[] {
    if (!isViewEvent(event)) return [];
    const change = instanceViewChange(event, occurredAt(event));
    if (change === null) return [];
    const _id = idOfStream(event.streamId);
    if ('created' in change) {
      const doc: InstanceDoc = { _id, ...change.created };
      return [{ collection: INSTANCES, op: 'replaceOne', filter: { _id }, doc, upsert: true }];
    }
    return [{ collection: INSTANCES, op: 'updateOne', filter: { _id }, update: { $set: change.set } }];
  },
};
