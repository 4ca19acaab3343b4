import type {
  Collection,
  Document,
  Filter,
  FindOptions,
  IndexSpec,
  Update,
  UpdateOptions,
  UpdateResult,
  WriteOptions,
} from '../port.js';
import { countDocuments, findDocuments } from './query-executor.js';
import type { Storage } from './storage.js';
import { createIndex, deleteMatching, dropIndex, insertMany, insertOne, prepareInsertMany, replaceOne, updateMany, updateOne } from './write-ops.js';
import { deepCopy } from './deep-copy.js';

const ONE: FindOptions = { limit: 1 };

/** What a collection needs from the store: snapshot reads and serialized, atomic writes. */
export interface Engine {
  read<R>(work: (storage: Storage) => R): Promise<R>;
  write<R>(work: (storage: Storage) => R, options?: WriteOptions): Promise<R>;
  /** Runs work now, outside any transaction, when none of the store's writes is in flight; else answers undefined. */
  prepare<R>(work: (storage: Storage) => R): R | undefined;
}

/**
 * A thin handle: every call is one read or one write transaction. Write arguments are copied when
 * the call is made, because the transaction runs later and the caller may reuse its objects.
 */
export class EmbeddedCollection<T extends Document> implements Collection<T> {
  constructor(
    readonly name: string,
    private readonly engine: Engine,
  ) {}

  findOne(filter: Filter): Promise<T | null> {
    return this.engine.read((s) => (findDocuments(s, this.name, filter, ONE)[0] as T | undefined) ?? null);
  }

  find(filter: Filter, options?: FindOptions): Promise<T[]> {
    return this.engine.read((s) => findDocuments(s, this.name, filter, options) as T[]);
  }

  count(filter: Filter = {}): Promise<number> {
    return this.engine.read((s) => countDocuments(s, this.name, filter));
  }

  async insertOne(doc: T, options?: WriteOptions): Promise<void> {
    const copy = deepCopy(doc);
    return this.engine.write((s) => insertOne(s, this.name, copy), options);
  }

  /**
   * Not copied (see the port): encoded now when no write of the store is in flight, so that the
   * transaction only writes them (see Storage.prepareInserts); else as each is inserted in it.
   */
  async insertMany(docs: readonly T[], options?: WriteOptions): Promise<void> {
    const prepared = this.engine.prepare((s) => prepareInsertMany(s, this.name, docs));
    if (prepared) return this.engine.write((s) => s.loadPrepared(prepared), options);
    return this.engine.write((s) => insertMany(s, this.name, docs), options);
  }

  async replaceOne(filter: Filter, doc: T, options?: UpdateOptions & WriteOptions): Promise<UpdateResult> {
    const [f, d] = deepCopy([filter, doc]);
    return this.engine.write((s) => replaceOne(s, this.name, f, d, options?.upsert), options);
  }

  async updateOne(filter: Filter, update: Update, options?: UpdateOptions & WriteOptions): Promise<UpdateResult> {
    const [f, u] = deepCopy([filter, update]);
    return this.engine.write((s) => updateOne(s, this.name, f, u, options?.upsert), options);
  }

  async updateMany(filter: Filter, update: Update, options?: WriteOptions): Promise<UpdateResult> {
    const [f, u] = deepCopy([filter, update]);
    return this.engine.write((s) => updateMany(s, this.name, f, u), options);
  }

  async deleteOne(filter: Filter, options?: WriteOptions): Promise<number> {
    const f = deepCopy(filter);
    return this.engine.write((s) => deleteMatching(s, this.name, f, 1), options);
  }

  async deleteMany(filter: Filter, options?: WriteOptions): Promise<number> {
    const f = deepCopy(filter);
    return this.engine.write((s) => deleteMatching(s, this.name, f), options);
  }

  async createIndex(spec: IndexSpec): Promise<void> {
    const copy = deepCopy(spec);
    const def = await this.engine.write((s) => createIndex(s, this.name, copy));
    // Only now are its entries committed and visible to readers.
    def.ready = true;
  }

  async dropIndex(name: string): Promise<boolean> {
    // Nothing to drop costs no write transaction (stores ensure their layout at every start).
    const def = await this.engine.read((s) => s.catalog.get(this.name, name));
    if (!def) return false;
    try {
      return (await this.engine.write((s) => dropIndex(s, this.name, name))) !== undefined;
    } catch (error) {
      // The catalog forgot it inside the transaction; the rollback kept it, entries and all.
      await this.engine.read((s) => s.catalog.restore(def)).catch(() => undefined);
      throw error;
    }
  }
}
