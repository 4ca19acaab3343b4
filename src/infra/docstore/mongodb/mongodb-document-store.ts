import { MongoClient, type Db, type WriteConcernSettings } from 'mongodb';
import { deepCopy } from '../embedded/deep-copy.js';
import type { Collection, Document, DocumentStore, WriteOp, WriteOptions } from '../port.js';
import { translateError } from './errors.js';
import { MongoCollection, type Access } from './mongodb-collection.js';
import { toBulkOperation } from './write-models.js';

/** Journaled on a majority of the replica set: what `durable` and `flush()` promise. */
const DURABLE: WriteConcernSettings = { w: 'majority', journal: true };
/** flush() writes this one document durably; see flush(). */
const FLUSH_COLLECTION = 'docstore_flush';
const PING_TIMEOUT_MS = 2_000;

export interface MongoDocumentStoreOptions {
  /** `mongodb://…/DATABASE`: the database is the URL's (the driver's default, `test`, without one). */
  url: string;
  serverSelectionTimeoutMS?: number;
}

/**
 * The document store on MongoDB through the official driver. Filters, updates and indexes are
 * MongoDB's own, so most calls pass straight through; what the adapter adds is the port's
 * guarantees: copies of arguments, string ids on upsert, DuplicateKeyError, durable writes, and
 * a close that lets writes in flight finish.
 *
 * batch() is ordered writes, not a transaction: read models must not depend on multi-document
 * transactions (a standalone mongod has none), so a failure part-way leaves the earlier writes.
 */
export class MongoDocumentStore implements DocumentStore {
  private readonly pending = new Set<Promise<unknown>>();
  private closing: Promise<void> | undefined;
  private readonly access: Access = {
    collection: (name) => this.db.collection<Document>(name),
    run: (collection, work, kind) => this.run(collection, work, kind),
    writeConcern: (options) => (options?.durable ? { writeConcern: DURABLE } : {}),
  };

  private constructor(
    private readonly client: MongoClient,
    private readonly db: Db,
  ) {}

  static async open(options: MongoDocumentStoreOptions): Promise<MongoDocumentStore> {
    const client = new MongoClient(options.url, {
      // Binary fields come back as Buffers, as the embedded store gives them.
      promoteBuffers: true,
      // MongoDB's drivers store undefined as null; the embedded store does the same.
      ignoreUndefined: false,
      serverSelectionTimeoutMS: options.serverSelectionTimeoutMS ?? 10_000,
    });
    await client.connect();
    return new MongoDocumentStore(client, client.db());
  }

  collection<T extends Document = Document>(name: string): Collection<T> {
    if (typeof name !== 'string' || name === '' || name.includes('$') || name.includes('\0')) {
      throw new TypeError(`invalid collection name: ${JSON.stringify(name)}`);
    }
    return new MongoCollection<T>(name, this.access);
  }

  async batch(ops: WriteOp[], options?: WriteOptions): Promise<void> {
    const copy = deepCopy(ops);
    const runs = consecutiveRuns(copy);
    for (const run of runs) {
      await this.run(
        run.collection,
        () => this.db.collection<Document>(run.collection).bulkWrite(run.ops.map(toBulkOperation), { ordered: true, ...this.access.writeConcern(options) }),
        'write',
      );
    }
  }

  /**
   * A write with `{w: "majority", j: true}` is acknowledged once the journal and the majority
   * commit point have passed it, and both advance in order: every write acknowledged before it
   * is then as durable as it is.
   */
  async flush(): Promise<void> {
    if (this.closing) return this.closing;
    await this.run(
      FLUSH_COLLECTION,
      () => this.db.collection<{ _id: string; n: number }>(FLUSH_COLLECTION).updateOne({ _id: 'flush' }, { $inc: { n: 1 } }, { upsert: true, writeConcern: DURABLE }),
      'write',
    );
  }

  async ping(): Promise<boolean> {
    if (this.closing) return false;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), PING_TIMEOUT_MS);
    });
    try {
      return await Promise.race([this.db.command({ ping: 1 }).then(() => true, () => false), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Lets writes in flight finish, then closes the client. Safe to call twice. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await Promise.allSettled([...this.pending]);
      await this.client.close();
    })();
    return this.closing;
  }

  private run<R>(collection: string, work: () => Promise<R>, kind: 'read' | 'write'): Promise<R> {
    if (this.closing) return Promise.reject(new Error('document store is closed'));
    const done = work().catch((error: unknown) => {
      throw translateError(collection, error);
    });
    if (kind === 'write') {
      this.pending.add(done);
      const forget = (): void => {
        this.pending.delete(done);
      };
      done.then(forget, forget);
    }
    return done;
  }
}

interface Run {
  collection: string;
  ops: WriteOp[];
}

/** The driver writes one collection per bulk: consecutive ops on one collection go together, in order. */
function consecutiveRuns(ops: WriteOp[]): Run[] {
  const runs: Run[] = [];
  for (const op of ops) {
    const last = runs[runs.length - 1];
    if (last && last.collection === op.collection) last.ops.push(op);
    else runs.push({ collection: op.collection, ops: [op] });
  }
  return runs;
}

