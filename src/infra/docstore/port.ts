/**
 * The document store port: a MongoDB-shaped subset. The embedded adapter (LMDB + mingo) and the
 * MongoDB adapter implement exactly this and pass test/contract/document-store.contract.ts.
 * Filters and update operators use MongoDB syntax and semantics.
 */

export type Document = { _id: string } & { [key: string]: unknown };
export type Filter = { [key: string]: unknown };
/** MongoDB update operators: $set, $unset, $inc, $setOnInsert, $push, $pull, $addToSet, $max, $min. */
export type Update = { [operator: string]: { [field: string]: unknown } };
export type SortSpec = { [field: string]: 1 | -1 };

export interface FindOptions {
  sort?: SortSpec;
  skip?: number;
  limit?: number;
}

export interface UpdateOptions {
  upsert?: boolean;
}

export interface UpdateResult {
  matchedCount: number;
  modifiedCount: number;
  upsertedId?: string;
}

export interface IndexSpec {
  name: string;
  /** Ordered fields, 1 ascending, -1 descending (dotted paths allowed). */
  keys: SortSpec;
  unique?: boolean;
  /**
   * Only documents matching this filter are indexed (and, for a unique index, kept unique); a
   * query uses the index only when its own conditions imply the filter. MongoDB's operators for
   * partial filters: equality, $eq, $exists: true, $gt, $gte, $lt, $lte, $type, $in.
   */
  partialFilterExpression?: Filter;
  /**
   * A text index: the field (an array of words, already lower-cased and stripped of accents by
   * the writer) that `{$text: {$search}}` searches, after the equality `keys`. MongoDB makes it a
   * text index (language none: no stemming, no stop words); the embedded store keeps, per word
   * (and equality keys), the run of _ids holding it (as `grouped`).
   * One per collection, as in MongoDB. Supported searches: `"w1" "w2"` (every word) or `w1 w2`
   * (any word), each word as stored; both stores then give the same answers.
   */
  text?: string;
  /**
   * A storage hint for an index over few distinct values each shared by many documents (a chat's
   * messages): the embedded store keeps one run of _ids per group of values, front-coded, instead
   * of one entry per document spelling out values and _id, and reads a group in _id order (a query
   * pinning every key to one value, or a few, sorted by _id). Neither partial nor unique. MongoDB
   * makes it an ordinary index of the keys.
   */
  grouped?: boolean;
}

/** One write of an atomic batch. */
export type WriteOp =
  | { collection: string; op: 'insertOne'; doc: Document }
  | { collection: string; op: 'replaceOne'; filter: Filter; doc: Document; upsert?: boolean }
  | { collection: string; op: 'updateOne'; filter: Filter; update: Update; upsert?: boolean }
  | { collection: string; op: 'updateMany'; filter: Filter; update: Update }
  | { collection: string; op: 'deleteOne'; filter: Filter }
  | { collection: string; op: 'deleteMany'; filter: Filter };

export interface WriteOptions {
  /** Resolve only once the write is on disk (fsync). Default false: read models can be rebuilt. */
  durable?: boolean;
  /**
   * The store adds the milliseconds of its own synchronous work for this write here (a metric of
   * where the CPU goes; the embedded store's copy, transaction body and settle). A store whose
   * work happens elsewhere (MongoDB's server) leaves it.
   */
  meter?: { writeMs: number };
}

export interface Collection<T extends Document = Document> {
  readonly name: string;
  findOne(filter: Filter): Promise<T | null>;
  find(filter: Filter, options?: FindOptions): Promise<T[]>;
  count(filter?: Filter): Promise<number>;
  /** Throws DuplicateKeyError on an existing _id or a unique index violation. */
  insertOne(doc: T, options?: WriteOptions): Promise<void>;
  /**
   * Inserts new documents in order, as insertOne each (embedded: all or none, one transaction;
   * MongoDB: an ordered insertMany, those before a failing one stay). Unlike the other writes it
   * does not copy them: a rebuild hands over hundreds of thousands, and a copy of each was a fair
   * part of its time. The caller must not change them until the call has resolved.
   */
  insertMany(docs: readonly T[], options?: WriteOptions): Promise<void>;
  replaceOne(filter: Filter, doc: T, options?: UpdateOptions & WriteOptions): Promise<UpdateResult>;
  updateOne(filter: Filter, update: Update, options?: UpdateOptions & WriteOptions): Promise<UpdateResult>;
  updateMany(filter: Filter, update: Update, options?: WriteOptions): Promise<UpdateResult>;
  deleteOne(filter: Filter, options?: WriteOptions): Promise<number>;
  deleteMany(filter: Filter, options?: WriteOptions): Promise<number>;
  /** Idempotent; creating an index over existing documents indexes them (unique checked). */
  createIndex(spec: IndexSpec): Promise<void>;
  /** Removes the named index with its entries; false when there was none (no error, unlike MongoDB's). */
  dropIndex(name: string): Promise<boolean>;
}

export interface DocumentStore {
  collection<T extends Document = Document>(name: string): Collection<T>;
  /**
   * Applies every op in order, atomically where the backend allows it (embedded: one
   * transaction, all or nothing; MongoDB: a transaction on a replica set, else ordered writes).
   * A DuplicateKeyError in any op aborts the whole batch (embedded).
   */
  batch(ops: WriteOp[], options?: WriteOptions): Promise<void>;
  /**
   * Resolves once every write acknowledged before the call is on disk, as if each had been made
   * `durable`. Lets a caller act on a committed write (others read it already) while its fsync
   * is still under way, and wait for both. During and after close it resolves once the store is
   * closed (closing writes everything out).
   */
  flush(): Promise<void>;
  /** True when the backend answers (for GET /ready). */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export class DuplicateKeyError extends Error {
  constructor(readonly collection: string, readonly key: string) {
    super(`duplicate key in ${collection}: ${key}`);
    this.name = 'DuplicateKeyError';
  }
}
