import type { Collection as DriverCollection, IndexSpecification, WriteConcernSettings } from 'mongodb';
import { deepCopy } from '../embedded/deep-copy.js';
import type { Collection, Document, Filter, FindOptions, IndexSpec, Update, UpdateOptions, UpdateResult, WriteOptions } from '../port.js';
import { isMissingIndex } from './errors.js';
import { driverFilter, driverUpdate, upsertedIdOf, withStringId } from './write-models.js';

/** What a collection needs from its store: the open driver collection, and calls counted until close. */
export interface Access {
  collection(name: string): DriverCollection<Document>;
  /** Runs a call unless the store is closed; writes are awaited by close, errors made the port's. */
  run<R>(collection: string, work: () => Promise<R>, kind: 'read' | 'write'): Promise<R>;
  writeConcern(options: WriteOptions | undefined): { writeConcern?: WriteConcernSettings };
}

/**
 * One collection over the driver. Write arguments are copied when the call is made: the driver
 * serializes them later, once it has a connection, and the caller may reuse its objects by then.
 */
export class MongoCollection<T extends Document> implements Collection<T> {
  constructor(
    readonly name: string,
    private readonly access: Access,
  ) {}

  findOne(filter: Filter): Promise<T | null> {
    const f = deepCopy(filter);
    return this.read(async (c) => (await c.findOne(driverFilter(f))) as unknown as T | null);
  }

  find(filter: Filter, options: FindOptions = {}): Promise<T[]> {
    const f = deepCopy(filter);
    const { sort, skip, limit } = options;
    return this.read(async (c) => {
      const cursor = c.find(driverFilter(f), {
        ...(sort ? { sort: { ...sort } } : {}),
        ...(skip ? { skip } : {}),
        // As in MongoDB, limit 0 means no limit.
        ...(limit ? { limit } : {}),
      });
      return (await cursor.toArray()) as unknown as T[];
    });
  }

  count(filter: Filter = {}): Promise<number> {
    const f = deepCopy(filter);
    return this.read((c) => c.countDocuments(driverFilter(f)));
  }

  insertOne(doc: T, options?: WriteOptions): Promise<void> {
    const d = deepCopy(doc);
    return this.write(async (c) => {
      await c.insertOne(d, this.access.writeConcern(options));
    });
  }

  /** Not copied (see the port); the driver serializes them before the call resolves. */
  insertMany(docs: readonly T[], options?: WriteOptions): Promise<void> {
    if (docs.length === 0) return Promise.resolve();
    return this.write(async (c) => {
      await c.insertMany([...docs], { ordered: true, ...this.access.writeConcern(options) });
    });
  }

  replaceOne(filter: Filter, doc: T, options?: UpdateOptions & WriteOptions): Promise<UpdateResult> {
    const [f, d] = deepCopy([filter, doc] as const);
    return this.write(async (c) => result(await c.replaceOne(driverFilter(f), d, { upsert: options?.upsert === true, ...this.access.writeConcern(options) })));
  }

  updateOne(filter: Filter, update: Update, options?: UpdateOptions & WriteOptions): Promise<UpdateResult> {
    const [f, u] = deepCopy([filter, update] as const);
    const upsert = options?.upsert === true;
    return this.write(async (c) =>
      result(await c.updateOne(driverFilter(f), driverUpdate(upsert ? withStringId(f, u) : u), { upsert, ...this.access.writeConcern(options) })),
    );
  }

  updateMany(filter: Filter, update: Update, options?: WriteOptions): Promise<UpdateResult> {
    const [f, u] = deepCopy([filter, update] as const);
    return this.write(async (c) => result(await c.updateMany(driverFilter(f), driverUpdate(u), this.access.writeConcern(options))));
  }

  deleteOne(filter: Filter, options?: WriteOptions): Promise<number> {
    const f = deepCopy(filter);
    return this.write(async (c) => (await c.deleteOne(driverFilter(f), this.access.writeConcern(options))).deletedCount);
  }

  deleteMany(filter: Filter, options?: WriteOptions): Promise<number> {
    const f = deepCopy(filter);
    return this.write(async (c) => (await c.deleteMany(driverFilter(f), this.access.writeConcern(options))).deletedCount);
  }

  async createIndex(spec: IndexSpec): Promise<void> {
    const { name, keys, unique, partialFilterExpression, text, grouped } = deepCopy(spec);
    // A grouped index answers its equality keys in `_id` order (a chat's page, newest first): on
    // MongoDB that is `_id` as the index's last key, so the page is read in order, not sorted in memory.
    const fields: IndexSpecification = text ? { ...keys, [text]: 'text' } : grouped ? { ...keys, _id: 1 } : { ...keys };
    await this.write((c) =>
      c.createIndex(fields, {
        name,
        ...(unique ? { unique: true } : {}),
        ...(partialFilterExpression ? { partialFilterExpression } : {}),
        // Words are stored as the writer cut them: no language's stemming or stop words.
        ...(text ? { default_language: 'none' } : {}),
      }),
    );
  }

  dropIndex(name: string): Promise<boolean> {
    return this.write(async (c) => {
      try {
        await c.dropIndex(name);
        return true;
      } catch (error) {
        if (isMissingIndex(error)) return false;
        throw error;
      }
    });
  }

  private read<R>(work: (c: DriverCollection<Document>) => Promise<R>): Promise<R> {
    return this.access.run(this.name, () => work(this.access.collection(this.name)), 'read');
  }

  private write<R>(work: (c: DriverCollection<Document>) => Promise<R>): Promise<R> {
    return this.access.run(this.name, () => work(this.access.collection(this.name)), 'write');
  }
}

function result(r: { matchedCount: number; modifiedCount: number; upsertedId: unknown }): UpdateResult {
  const upsertedId = upsertedIdOf(r.upsertedId);
  return { matchedCount: r.matchedCount, modifiedCount: r.modifiedCount, ...(upsertedId !== undefined ? { upsertedId } : {}) };
}
