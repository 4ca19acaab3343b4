import type { WriteOp } from '../../infra/docstore/port.js';
import { DELIVERIES, type DeliveryDoc } from './documents.js';

/** What one attempt ended in, as the dispatcher decided it. */
export type Outcome =
  | { kind: 'delivered'; statusCode: number }
  | { kind: 'retry'; statusCode: number | null; error: string; dueMs: number }
  | { kind: 'failed'; statusCode: number | null; error: string };

/**
 * The write for an attempt's outcome. It applies only if nothing else changed the delivery
 * since the attempt read it (same rev): a manual retry in the meantime wins.
 */
export function outcomeOp(delivery: Pick<DeliveryDoc, '_id' | 'rev'>, outcome: Outcome, nowMs: number): WriteOp {
  const at = new Date(nowMs).toISOString();
  const common = { last_status_code: outcome.statusCode, last_error: outcome.kind === 'delivered' ? null : outcome.error };
  let set: Record<string, unknown>;
  switch (outcome.kind) {
    case 'delivered':
      set = { ...common, state: 'delivered', status: 'delivered', delivered_at: at, next_attempt_at: null };
      break;
    case 'retry':
      set = { ...common, state: 'retrying', status: 'pending', due_ms: outcome.dueMs, next_attempt_at: new Date(outcome.dueMs).toISOString() };
      break;
    case 'failed':
      set = { ...common, state: 'failed', status: 'failed', next_attempt_at: null };
      break;
  }
  return {
    collection: DELIVERIES,
    op: 'updateOne',
    filter: { _id: delivery._id, rev: delivery.rev },
    update: { $set: set, $inc: { attempts: 1, rev: 1 } },
  };
}

/** Closes a delivery that can no longer be attempted, without counting an attempt. */
export function expiredOp(delivery: Pick<DeliveryDoc, '_id' | 'rev'>, error: string): WriteOp {
  return {
    collection: DELIVERIES,
    op: 'updateOne',
    filter: { _id: delivery._id, rev: delivery.rev },
    update: { $set: { state: 'failed', status: 'failed', last_error: error, next_attempt_at: null }, $inc: { rev: 1 } },
  };
}
