import type { Document, Filter, IndexSpec, Update, UpdateResult, WriteOp } from '../port.js';
import { defineIndex, sameButLayout, sameDefinition, sameKeys, type IndexDef } from './index-keys.js';
import { findDocuments } from './query-executor.js';
import type { PreparedInserts, Storage } from './storage.js';
import { applyUpdate, assertReplacement, assertUpdate, replacementId, upsertDocument } from './update-apply.js';
import { compareValues } from './value-order.js';

/*
 * The write operations, synchronous so they run whole inside one LMDB write transaction: the read
 * of the matching documents and the write that depends on it can never interleave with another
 * writer, and a throw aborts everything the transaction did.
 */

const NOTHING: UpdateResult = { matchedCount: 0, modifiedCount: 0 };

export function insertOne(storage: Storage, collection: string, doc: Document): void {
  if (typeof doc._id !== 'string') throw new TypeError('documents need a string _id');
  storage.insertDoc(collection, idFirst(doc));
}

/**
 * New documents in a transaction of their own (a collection's insertMany): nothing else in it can
 * have read or written them, so they skip what concurrent readers and later operations of a
 * shared transaction need (see Storage.loadDoc).
 */
export function insertMany(storage: Storage, collection: string, docs: readonly Document[]): void {
  for (const doc of docs) storage.loadDoc(collection, idFirst(withStringId(doc)));
}

/** insertMany's documents encoded before its transaction, for Storage.loadPrepared inside it. */
export function prepareInsertMany(storage: Storage, collection: string, docs: readonly Document[]): PreparedInserts {
  return storage.prepareInserts(collection, docs.map((doc) => idFirst(withStringId(doc))));
}

function withStringId(doc: Document): Document {
  if (typeof doc._id !== 'string') throw new TypeError('documents need a string _id');
  return doc;
}

export function replaceOne(storage: Storage, collection: string, filter: Filter, doc: Document, upsert = false): UpdateResult {
  assertReplacement(doc);
  const [current] = findDocuments(storage, collection, filter, { limit: 1 });
  if (current) {
    if (doc._id !== undefined && doc._id !== current._id) {
      throw new TypeError("the replacement would alter the immutable field '_id'");
    }
    const next = idFirst({ ...doc, _id: current._id });
    const changed = compareValues(current, next) !== 0;
    if (changed) storage.replaceDoc(collection, current, next);
    return { matchedCount: 1, modifiedCount: changed ? 1 : 0 };
  }
  if (!upsert) return NOTHING;
  const inserted = idFirst({ ...doc, _id: replacementId(doc, filter) });
  storage.insertDoc(collection, inserted);
  return { ...NOTHING, upsertedId: inserted._id };
}

export function updateOne(storage: Storage, collection: string, filter: Filter, update: Update, upsert = false): UpdateResult {
  assertUpdate(update);
  const [current] = findDocuments(storage, collection, filter, { limit: 1 });
  if (current) return { matchedCount: 1, modifiedCount: modify(storage, collection, current, update) ? 1 : 0 };
  if (!upsert) return NOTHING;
  const doc = upsertDocument(filter, update);
  storage.insertDoc(collection, doc);
  return { ...NOTHING, upsertedId: doc._id };
}

export function updateMany(storage: Storage, collection: string, filter: Filter, update: Update): UpdateResult {
  assertUpdate(update);
  const matches = findDocuments(storage, collection, filter);
  let modifiedCount = 0;
  for (const doc of matches) if (modify(storage, collection, doc, update)) modifiedCount++;
  return { matchedCount: matches.length, modifiedCount };
}

export function deleteMatching(storage: Storage, collection: string, filter: Filter, limit?: number): number {
  const matches = findDocuments(storage, collection, filter, limit === undefined ? {} : { limit });
  for (const doc of matches) storage.removeDoc(collection, doc);
  return matches.length;
}

export function applyWriteOp(storage: Storage, op: WriteOp): void {
  switch (op.op) {
    case 'insertOne':
      insertOne(storage, op.collection, op.doc);
      return;
    case 'replaceOne':
      replaceOne(storage, op.collection, op.filter, op.doc, op.upsert);
      return;
    case 'updateOne':
      updateOne(storage, op.collection, op.filter, op.update, op.upsert);
      return;
    case 'updateMany':
      updateMany(storage, op.collection, op.filter, op.update);
      return;
    case 'deleteOne':
      deleteMatching(storage, op.collection, op.filter, 1);
      return;
    case 'deleteMany':
      deleteMatching(storage, op.collection, op.filter);
      return;
    default: {
      const unknown: never = op;
      throw new TypeError(`unknown write op ${JSON.stringify(unknown)}`);
    }
  }
}

/**
 * Creates the index (building its entries) or returns the identical one that exists. As in
 * MongoDB, reusing a name for other keys, or declaring the same keys twice, is an error.
 */
export function createIndex(storage: Storage, collection: string, spec: IndexSpec): IndexDef {
  const existing = storage.catalog.get(collection, spec.name);
  // A text index of a store made before they were grouped (one entry per word and document, most
  // of the messages model's size): rebuilt in the new layout as the projection declares it at start.
  if (existing && sameButLayout(existing, spec)) storage.dropIndex(existing);
  else if (existing) {
    if (sameDefinition(existing, spec)) return existing;
    throw new TypeError(`index ${spec.name} already exists on ${collection} with a different definition`);
  }
  const def = defineIndex(collection, spec);
  const twin = storage.catalog.all(collection).find((other) => sameKeys(other, def));
  if (twin) throw new TypeError(`index ${twin.name} on ${collection} already has the keys of ${spec.name}`);
  storage.buildIndex(def);
  return def;
}

/** Removes the index and every entry of it, in one transaction; answers what it removed. */
export function dropIndex(storage: Storage, collection: string, name: string): IndexDef | undefined {
  const def = storage.catalog.get(collection, name);
  if (def) storage.dropIndex(def);
  return def;
}

function modify(storage: Storage, collection: string, current: Document, update: Update): boolean {
  // $setOnInsert alone leaves a matched document as it is (projections "ensure" a document so).
  if (onlyOnInsert(update)) return false;
  const { doc, changed } = applyUpdate(current, update);
  if (changed) storage.replaceDoc(collection, current, doc);
  return changed;
}

function onlyOnInsert(update: Update): boolean {
  for (const op in update) if (op !== '$setOnInsert') return false;
  return true;
}

/**
 * MongoDB stores _id as the first field. A document that has it first already (nearly all: the
 * callers hand over their own copy) is kept as is: a rebuild inserts every document of a model,
 * and a second copy of each was a fair part of its time.
 */
function idFirst(doc: Document): Document {
  if (firstKey(doc) === '_id') return doc;
  const { _id, ...rest } = doc;
  return { _id, ...rest };
}

function firstKey(doc: Document): string | undefined {
  for (const key in doc) return key;
  return undefined;
}
