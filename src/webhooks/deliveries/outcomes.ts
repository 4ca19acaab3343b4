import type { Filter, WriteOp } from '../../infra/docstore/port.js';
import { DELIVERIES, type DeliveryDoc } from './documents.js';

/** What one attempt ended in, as the dispatcher decided it. */
export type Outcome =
  | { kind: 'delivered'; statusCode: number }
  | { kind: 'retry'; statusCode: number | null; error: string; dueMs: number }
  | { kind: 'failed'; statusCode: number | null; error: string };

/** The delivery after an attempt (the attempt counts). */
export function afterAttempt(delivery: DeliveryDoc, outcome: Outcome, nowMs: number): DeliveryDoc {
  const next: DeliveryDoc = {
    ...delivery,
    attempts: delivery.attempts + 1,
    last_status_code: outcome.statusCode,
    last_error: outcome.kind === 'delivered' ? null : outcome.error,
    retry_host: outcome.kind === 'retry' ? delivery.host : null,
  };
  switch (outcome.kind) {
    case 'delivered':
      return { ...next, state: 'delivered', delivered_at: new Date(nowMs).toISOString(), next_attempt_at: null };
    case 'retry':
      return { ...next, state: 'retrying', due_ms: outcome.dueMs, next_attempt_at: new Date(outcome.dueMs).toISOString() };
    case 'failed':
      return { ...next, state: 'failed', next_attempt_at: null };
  }
}

/** A delivery that can no longer be attempted: failed, without counting an attempt. */
export function expired(delivery: DeliveryDoc, error: string): DeliveryDoc {
  return { ...delivery, state: 'failed', last_error: error, next_attempt_at: null, retry_host: null };
}

/** Due now, whatever its state, with a fresh retry horizon (a retry asked for by hand). */
export function dueNow(delivery: DeliveryDoc, nowMs: number): DeliveryDoc {
  return {
    ...delivery,
    state: 'retrying',
    due_ms: nowMs,
    retry_host: delivery.host,
    next_attempt_at: new Date(nowMs).toISOString(),
    horizon_from_ms: nowMs,
  };
}

/**
 * The whole delivery, written by _id: the store applies it without a query engine, which an
 * update operator would need (several times the cost, on the hottest writes: the reactor's insert
 * and the dispatcher's outcome). Only the process that holds a delivery, or a retry by hand once
 * it is no longer held, changes it, so there is no concurrent change to lose. With several nodes
 * the write is fenced: a node whose claim lapsed, and whose delivery another node has moved on
 * since, writes nothing.
 */
export const saveOp = (delivery: DeliveryDoc, options: { upsert?: boolean; fence?: Filter } = {}): WriteOp => ({
  collection: DELIVERIES,
  op: 'replaceOne',
  // Several nodes: the write applies only while the delivery is as this node claimed it.
  filter: options.fence ? { ...options.fence, _id: delivery._id } : { _id: delivery._id },
  doc: withoutClaim(delivery),
  ...(options.upsert ? { upsert: true } : {}),
});

/** A saved delivery carries no claim: whoever attempts it next claims it afresh. */
function withoutClaim(delivery: DeliveryDoc): DeliveryDoc {
  if (delivery.claim_until === undefined && delivery.claim_node === undefined && delivery.claim_token === undefined) return delivery;
  const { claim_until: _until, claim_node: _node, claim_token: _token, ...rest } = delivery;
  return rest;
}
