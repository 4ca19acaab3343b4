import type { WriteOp } from '../infra/docstore/port.js';

type Increment = Extract<WriteOp, { op: 'updateOne' }> & { filter: { _id: string }; update: { $inc: Record<string, number> } };

/**
 * The increments of one batch to the same document, as one write (issue 31: per-event work done
 * per batch). For a collection whose documents change only by upserted `$inc` keyed by `_id`, with
 * the same `$setOnInsert` for an `_id` (counters), adding them up in memory leaves the documents
 * as the writes in order would, and the store reads, re-encodes and re-indexes each document once
 * per batch instead of once per event. Writes of other collections or shapes pass unchanged, in
 * their order; an added-up write stands where its document's first one stood.
 */
export function addedIncrements(collection: string, ops: readonly WriteOp[]): WriteOp[] {
  const out: WriteOp[] = [];
  const byId = new Map<string, Record<string, number>>();
  for (const op of ops) {
    if (!isIncrement(collection, op)) {
      out.push(op);
      continue;
    }
    const sums = byId.get(op.filter._id);
    if (sums) {
      for (const [field, n] of Object.entries(op.update.$inc)) sums[field] = (sums[field] ?? 0) + n;
      continue;
    }
    // A copy: the write handed in stays as it was.
    const own = { ...op.update.$inc };
    byId.set(op.filter._id, own);
    out.push({ ...op, update: { ...op.update, $inc: own } });
  }
  return out;
}

function isIncrement(collection: string, op: WriteOp): op is Increment {
  if (op.collection !== collection || op.op !== 'updateOne' || op.upsert !== true) return false;
  const { filter, update } = op;
  if (Object.keys(filter).length !== 1 || typeof filter._id !== 'string') return false;
  for (const key of Object.keys(update)) if (key !== '$inc' && key !== '$setOnInsert') return false;
  const inc = update.$inc;
  if (typeof inc !== 'object' || inc === null) return false;
  return Object.values(inc).every((n) => typeof n === 'number');
}
