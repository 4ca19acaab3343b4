import { ObjectId, type AnyBulkWriteOperation, type Filter as DriverFilter, type UpdateFilter } from 'mongodb';
import type { Document, Filter, Update, WriteOp } from '../port.js';

/**
 * An upsert that names no _id gets one from mongod, as an ObjectId. The port's documents have
 * string ids, so such an upsert is given a fresh string id to insert under ($setOnInsert: it is
 * used only when the upsert inserts).
 */
export function withStringId(filter: Filter, update: Update): Update {
  if (namesId(filter) || update.$set?._id !== undefined || update.$setOnInsert?._id !== undefined) return update;
  return { ...update, $setOnInsert: { ...update.$setOnInsert, _id: new ObjectId().toHexString() } };
}

function namesId(filter: Filter): boolean {
  if (filter._id !== undefined) return true;
  const clauses = filter.$and;
  return Array.isArray(clauses) && clauses.some((clause) => typeof clause === 'object' && clause !== null && namesId(clause as Filter));
}

/** mongod answers with the _id it inserted under: a string here, unless someone else wrote it. */
export function upsertedIdOf(id: unknown): string | undefined {
  if (id === null || id === undefined) return undefined;
  return id instanceof ObjectId ? id.toHexString() : String(id);
}

export function toBulkOperation(op: WriteOp): AnyBulkWriteOperation<Document> {
  switch (op.op) {
    case 'insertOne':
      return { insertOne: { document: op.doc } };
    case 'replaceOne':
      return { replaceOne: { filter: driverFilter(op.filter), replacement: op.doc, upsert: op.upsert === true } };
    case 'updateOne': {
      const update = op.upsert ? withStringId(op.filter, op.update) : op.update;
      return { updateOne: { filter: driverFilter(op.filter), update: driverUpdate(update), upsert: op.upsert === true } };
    }
    case 'updateMany':
      return { updateMany: { filter: driverFilter(op.filter), update: driverUpdate(op.update) } };
    case 'deleteOne':
      return { deleteOne: { filter: driverFilter(op.filter) } };
    case 'deleteMany':
      return { deleteMany: { filter: driverFilter(op.filter) } };
    default: {
      const unknown: never = op;
      throw new TypeError(`unknown write op ${JSON.stringify(unknown)}`);
    }
  }
}

/** The port's filters and updates are MongoDB syntax already; only the driver's types differ. */
export function driverFilter(filter: Filter): DriverFilter<Document> {
  return filter as DriverFilter<Document>;
}

export function driverUpdate(update: Update): UpdateFilter<Document> {
  return update as UpdateFilter<Document>;
}
