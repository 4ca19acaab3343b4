import { billingDueAt, evolveBilling, NO_BILLING, type BillingState, type RenewalRule } from '../domain/instance/billing.js';
import { InstanceEventSchemas, type InstanceEvent } from '../domain/instance/events.js';
import type { Document, DocumentStore, WriteOp } from '../infra/docstore/port.js';
import { isOneOf, type RecordedEvent } from '../domain/recorded.js';
import type { Projection } from '../projections/projection.js';
import { idOfStream } from '../domain/streams.js';

export const BILLING_DUE = 'billing_due';

/** Each instance's billing as folded from the log, and when its next transition is due. */
export interface BillingDueDoc extends Document {
  _id: string;
  billing: BillingState;
  /** Absent when nothing will happen by time alone (EXPIRED, CANCELED). */
  due_at?: string;
}

const BILLING_EVENT_TYPES: ReadonlySet<string> = new Set([
  'InstanceCreated',
  'SubscriptionStarted',
  'SubscriptionRenewed',
  'SubscriptionCancellationScheduled',
  'SubscriptionResumed',
  'PaymentFailed',
  'TrialExpired',
  'SubscriptionExpired',
  'InstanceCanceled',
] satisfies InstanceEvent['type'][]);

/**
 * The timers' durable memory: a read model of due times, folded from the log with the decider's
 * own billing fold, so a restart or a rebuild finds every pending transition where it was.
 */
export class DueTimesProjection implements Projection {
  readonly name = 'billing-due';
  readonly eventTypes = BILLING_EVENT_TYPES;
  /** The fold's current state per instance (apply is synchronous, so it cannot read the store). */
  private states = new Map<string, BillingState>();

  constructor(
    private readonly rule: RenewalRule,
    /** Told once due times up to a position are committed, so the timer looks again. */
    private readonly onCommitted: () => void = () => undefined,
  ) {}

  async setup(docs: DocumentStore): Promise<void> {
    const collection = docs.collection<BillingDueDoc>(BILLING_DUE);
    await collection.createIndex({ name: 'due_at', keys: { due_at: 1 }, partialFilterExpression: { due_at: { $exists: true } } });
    this.states = new Map((await collection.find({})).map((d) => [d._id, d.billing]));
  }

  apply(event: RecordedEvent): WriteOp[] {
    if (!isOneOf(InstanceEventSchemas, event)) return [];
    const instanceId = idOfStream(event.streamId);
    const billing = evolveBilling(this.states.get(instanceId) ?? NO_BILLING, event);
    this.states.set(instanceId, billing);
    const due = billingDueAt(billing, this.rule);
    const doc: BillingDueDoc = due === null ? { _id: instanceId, billing } : { _id: instanceId, billing, due_at: due };
    return [{ collection: BILLING_DUE, op: 'replaceOne', filter: { _id: instanceId }, doc, upsert: true }];
  }

  committed(): void {
    this.onCommitted();
  }
}
