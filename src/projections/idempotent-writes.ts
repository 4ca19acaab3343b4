import type { Filter, Update, WriteOp } from '../infra/docstore/port.js';

/**
 * Makes a projection's writes for one event safe to apply twice, for document stores whose batch
 * is not atomic (MongoDB without multi-document transactions): after a crash part-way through a
 * batch, the runner rereads from the checkpoint (written last) and applies the same writes again.
 *
 * Each document records, per projection, the last write applied to it: `_applied.<projection>`,
 * the event's log position and the write's index within the event, as a fixed-width string (so
 * MongoDB and the embedded store order it alike, whatever the position's size). Every write is
 * conditional on that mark being lower and moves it; a write already applied matches nothing, so
 * an `$inc` or `$push` is never applied twice. Documents of other writers (no mark) match.
 *
 * An upsert becomes two writes: one that only makes sure the document exists (a no-op when it
 * does, so harmless twice), then the conditional update. A single conditional upsert would try to
 * insert a second document when the condition fails on an existing one.
 */
const APPLIED = '_applied';

const POSITION_DIGITS = 20; // 2^64 has 20 decimal digits
const INDEX_DIGITS = 8;

export function appliedMark(position: bigint, index: number): string {
  return `${position.toString().padStart(POSITION_DIGITS, '0')}:${String(index).padStart(INDEX_DIGITS, '0')}`;
}

export function idempotentWrites(projection: string, position: bigint, ops: readonly WriteOp[]): WriteOp[] {
  if (projection === '' || projection.includes('.') || projection.startsWith('$')) {
    throw new TypeError(`projection name ${JSON.stringify(projection)} cannot name a field`);
  }
  const field = `${APPLIED}.${projection}`;
  const out: WriteOp[] = [];
  ops.forEach((op, index) => {
    const mark = appliedMark(position, index);
    const notYet = (filter: Filter): Filter => {
      if (Object.hasOwn(filter, field) || Object.hasOwn(filter, APPLIED)) throw new TypeError(`${APPLIED} is reserved for the projection runner`);
      return { ...filter, [field]: { $not: { $gte: mark } } };
    };
    const stamped = (update: Update): Update => ({ ...update, $set: { ...update.$set, [field]: mark } });
    switch (op.op) {
      case 'insertOne': {
        const { _id, ...fields } = op.doc;
        out.push({ collection: op.collection, op: 'updateOne', filter: { _id }, update: { $setOnInsert: { ...fields, [APPLIED]: { [projection]: mark } } }, upsert: true });
        return;
      }
      case 'replaceOne': {
        if (op.upsert) {
          const { _id, ...fields } = op.doc;
          out.push(ensure(op.collection, op.filter, field, _id, fields));
        }
        out.push({ collection: op.collection, op: 'replaceOne', filter: notYet(op.filter), doc: { ...op.doc, [APPLIED]: { [projection]: mark } } });
        return;
      }
      case 'updateOne': {
        const { $setOnInsert, ...rest } = op.update;
        if (op.upsert) {
          // $set's values go in at once too: no document is ever there with only half its fields.
          const { _id: _kept, ...set } = rest.$set ?? {};
          out.push(ensure(op.collection, op.filter, field, undefined, { ...set, ...$setOnInsert }));
        }
        // $setOnInsert alone only ever made sure the document exists: that is done.
        if (Object.keys(rest).length > 0) out.push({ collection: op.collection, op: 'updateOne', filter: notYet(op.filter), update: stamped(rest) });
        return;
      }
      case 'updateMany':
        out.push({ collection: op.collection, op: 'updateMany', filter: notYet(op.filter), update: stamped(op.update) });
        return;
      case 'deleteOne':
      case 'deleteMany':
        // A document a later event wrote again (its mark is higher) is not this delete's to remove.
        out.push({ ...op, filter: notYet(op.filter) });
        return;
      default: {
        const unknown: never = op;
        throw new TypeError(`unknown write op ${JSON.stringify(unknown)}`);
      }
    }
  });
  return out;
}

/**
 * Creates the document as the upsert would have (filter equalities and the given fields) with the
 * lowest mark, or leaves an existing one alone. The conditional write that follows does the rest
 * (and moves the mark), so the document holds every field a unique index may need from the start.
 */
function ensure(collection: string, filter: Filter, field: string, id: string | undefined, onInsert: Update[string] = {}): WriteOp {
  const names = Object.hasOwn(filter, '_id') || Object.hasOwn(onInsert, '_id');
  return {
    collection,
    op: 'updateOne',
    filter,
    update: { $setOnInsert: { ...onInsert, ...(id !== undefined && !names ? { _id: id } : {}), [field]: '' } },
    upsert: true,
  };
}
