import type { Actor } from '../../domain/actor.js';
import type { Document, DocumentStore, WriteOp } from '../../infra/docstore/port.js';
import type { RecordedEvent } from '../../domain/recorded.js';
import type { Projection } from '../projection.js';
import { readAudit } from './audit-metadata.js';

export const HISTORY = 'history';

/**
 * One entry per event that belongs to an instance's or an account's history: where to find the
 * event in the log and who caused it, never its data. A page of history reads these in log order
 * from an index, then only the events on the page from their streams; data that retention removed
 * from the log is gone from history with it, because no copy of it was ever made here.
 */
export interface HistoryEntryDoc extends Document {
  /** The log position, zero-padded so that _id order is log order. */
  _id: string;
  /** Absent when the event is no instance's. */
  instance_id?: string;
  /** Present only on the account's own history: sign-up, sign-ins, rotations, instances made and canceled. */
  account_id?: string;
  stream: string;
  revision: number;
  type: string;
  event_id: string;
  recorded_at: string;
  actor: Actor;
  correlation_id: string | null;
  causation_id: string | null;
}

export const POSITION_DIGITS = 20;
export const positionKey = (position: bigint) => position.toString().padStart(POSITION_DIGITS, '0');

/** Streams keyed by an instance id: `<category>-<instanceId>`. */
const INSTANCE_CATEGORIES = new Set(['instance', 'session', 'webhook', 'helpdesk', 'billing']);

const ACCOUNT_LEVEL_INSTANCE_EVENTS = new Set(['InstanceCreated', 'InstanceCanceled']);

function instanceOf(event: RecordedEvent): string | undefined {
  if (typeof event.metadata.instanceId === 'string') return event.metadata.instanceId;
  const dash = event.streamId.indexOf('-');
  return dash > 0 && INSTANCE_CATEGORIES.has(event.streamId.slice(0, dash)) ? event.streamId.slice(dash + 1) : undefined;
}

function accountOf(event: RecordedEvent): string | undefined {
  if (event.streamId.startsWith('account-')) return event.streamId.slice('account-'.length);
  const owner = event.metadata.accountId ?? ('account_id' in event.data ? event.data.account_id : undefined);
  if (typeof owner !== 'string') return undefined;
  if (event.type === 'AccountRegistered' || ACCOUNT_LEVEL_INSTANCE_EVENTS.has(event.type)) return owner;
  return undefined;
}

/** A set that holds every name: history reads every event, including types added after it. */
class EveryType extends Set<string> {
  override has(): boolean {
    return true;
  }
}

export const historyProjection: Projection = {
  name: 'history',
  eventTypes: new EveryType(),

  async setup(docs: DocumentStore) {
    const entries = docs.collection(HISTORY);
    // Equal keys are ordered by _id, the position: both indexes hand out a history in log order.
    // Partial: most entries are an instance's only, and index writes are most of a rebuild's cost.
    await entries.createIndex({ name: 'instance', keys: { instance_id: 1 }, partialFilterExpression: { instance_id: { $exists: true } } });
    await entries.createIndex({ name: 'account', keys: { account_id: 1 }, partialFilterExpression: { account_id: { $exists: true } } });
  },

  apply(event): WriteOp[] {
    const instanceId = instanceOf(event);
    const accountId = accountOf(event);
    if (instanceId === undefined && accountId === undefined) return [];
    // Fields written one by one, not spread from readAudit's answer: a rebuild makes one per event.
    const audit = readAudit(event.metadata);
    const doc: HistoryEntryDoc = {
      _id: positionKey(event.position),
      stream: event.streamId,
      revision: Number(event.revision),
      type: event.type,
      event_id: event.id,
      recorded_at: event.created.toISOString(),
      actor: audit.actor,
      correlation_id: audit.correlation_id,
      causation_id: audit.causation_id,
    };
    if (instanceId !== undefined) doc.instance_id = instanceId;
    if (accountId !== undefined) doc.account_id = accountId;
    // Keyed by position, so a replayed event writes the same entry again.
    return [{ collection: HISTORY, op: 'replaceOne', filter: { _id: doc._id }, doc, upsert: true }];
  },
};
