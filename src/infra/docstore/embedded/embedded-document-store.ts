import { open, type Database, type DatabaseOptions, type RootDatabase } from 'lmdb';
import type { Collection, Document, DocumentStore, Filter, FindOptions, WriteOp, WriteOptions } from '../port.js';
import { EmbeddedCollection, type Engine } from './embedded-collection.js';
import { IndexCatalog, type CatalogDb } from './index-catalog.js';
import type { GroupDb } from './id-groups.js';
import { explainFind, type Explanation } from './query-executor.js';
import { Storage, type Written } from './storage.js';
import { applyWriteOp } from './write-ops.js';
import { deepCopy } from './deep-copy.js';

/** The store's three databases in an LMDB environment. */
export function openStorage(root: RootDatabase): Storage {
  const docsOptions: DatabaseOptions & { name: string; encoder: object } = {
    name: 'documents',
    keyEncoding: 'binary',
    // Documents of a collection mostly share their fields: each shape is kept once, under this
    // key, and a document names it by number (msgpackr records). Decoding one is several times
    // cheaper than decoding a map with every field name spelled out (every read of a read model
    // decodes), encoding twice, and a chat half the size. Documents stored as maps still decode.
    // The key is one zero byte: a document's key starts with its collection's name, never empty
    // and never holding a zero byte, so no document has it and no collection's range reaches it.
    sharedStructuresKey: Buffer.from([0]),
    // MongoDB's drivers store undefined as null; msgpackr does the same with this flag. Room for
    // many shapes (a document with fields of its own, such as labels, adds one); past it a shape
    // is spelled out in the document, as every one was before. A document stored as a map must
    // still decode as an object: msgpackr decodes maps as Maps once records are on, unless told.
    encoder: { encodeUndefinedAsNil: true, maxSharedStructures: 2048, mapsAsObjects: true },
  };
  const docs: Database<Document, Buffer> = root.openDB(docsOptions);
  const index: Database<string, Buffer> = root.openDB({ name: 'index-entries', keyEncoding: 'binary', encoding: 'string' });
  const catalog: CatalogDb = root.openDB({ name: 'index-catalog' });
  const groups: GroupDb = root.openDB({ name: 'index-groups', keyEncoding: 'binary', encoding: 'binary' });
  return new Storage(docs, index, new IndexCatalog(catalog), groups);
}

/**
 * The document store on LMDB, queried with mingo. Reads run synchronously on LMDB's snapshot;
 * every write runs as a child transaction (`transactionSync`) inside an asynchronous batched
 * transaction: a throw rolls back that write alone, and LMDB's single writer serializes
 * read-modify-write cycles, so concurrent updates never lose each other's changes.
 */
export class EmbeddedDocumentStore implements DocumentStore {
  private readonly pending = new Set<Promise<unknown>>();
  private closing: Promise<void> | undefined;
  private readonly engine: Engine = {
    read: (work) => this.read(work),
    write: (work, options) => this.write(work, options),
    prepare: (work) => {
      this.assertOpen();
      // A write in flight may have saved a document shape its commit could still take back.
      if (this.pending.size > 0) return undefined;
      const shapesBefore = this.storage.savedShapes();
      try {
        return work(this.storage);
      } catch (error) {
        // msgpackr counts a shape as saved when it meets it, before the value that failed to
        // encode: it was never written, and must not number the next document of that shape.
        this.storage.forgetUnsavedShapes(shapesBefore);
        throw error;
      }
    },
  };

  private constructor(
    private readonly root: RootDatabase,
    private readonly storage: Storage,
  ) {}

  static async open(options: { path: string }): Promise<EmbeddedDocumentStore> {
    const root = open({ path: options.path });
    return new EmbeddedDocumentStore(root, openStorage(root));
  }

  collection<T extends Document = Document>(name: string): Collection<T> {
    if (typeof name !== 'string' || name === '' || name.includes('$') || name.includes('\0')) {
      throw new TypeError(`invalid collection name: ${JSON.stringify(name)}`);
    }
    return new EmbeddedCollection<T>(name, this.engine);
  }

  async batch(ops: WriteOp[], options?: WriteOptions): Promise<void> {
    const started = options?.meter ? performance.now() : 0;
    const copy = deepCopy(ops);
    if (options?.meter) options.meter.writeMs += performance.now() - started;
    return this.write((storage) => {
      for (const op of copy) applyWriteOp(storage, op);
    }, options);
  }

  async flush(): Promise<void> {
    // Closing flushes everything (a caller racing a shutdown is answered once that is done).
    if (this.closing) return this.closing;
    // With overlappingSync a commit is acknowledged before its fsync; `flushed` waits for the
    // fsync of everything committed so far.
    await this.root.flushed;
  }

  async ping(): Promise<boolean> {
    return this.closing === undefined;
  }

  /** Lets in-flight writes finish, then closes LMDB. Safe to call twice. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await Promise.allSettled([...this.pending]);
      await this.root.close();
    })();
    return this.closing;
  }

  /** How a find would run and what it touched (adapter-specific, like MongoDB's explain). */
  explain(collection: string, filter: Filter, options?: FindOptions): Promise<Explanation> {
    return this.read((storage) => explainFind(storage, collection, filter, options));
  }

  private async read<R>(work: (storage: Storage) => R): Promise<R> {
    this.assertOpen();
    return work(this.storage);
  }

  private write<R>(work: (storage: Storage) => R, options?: WriteOptions): Promise<R> {
    try {
      this.assertOpen();
    } catch (error) {
      return Promise.reject(error);
    }
    const done = this.commit(work, options?.durable === true, options?.meter);
    this.pending.add(done);
    const forget = (): void => {
      this.pending.delete(done);
    };
    done.then(forget, forget);
    return done;
  }

  private async commit<R>(work: (storage: Storage) => R, durable: boolean, meter?: { writeMs: number }): Promise<R> {
    let written: Written | undefined;
    let committed = false;
    let threw = false;
    let shapesBefore = 0;
    let result: R;
    try {
      result = await this.root.transaction(() => {
        const started = meter ? performance.now() : 0;
        this.storage.beginWrite();
        shapesBefore = this.storage.savedShapes();
        try {
          return this.root.transactionSync(() => work(this.storage));
        } catch (error) {
          // Rolled back with any document shape it saved: read the shapes again before the next
          // write of this batch encodes one (see forgetUnsavedShapes).
          threw = true;
          this.storage.forgetUnsavedShapes(shapesBefore);
          throw error;
        } finally {
          written = this.storage.endWrite();
          if (meter) meter.writeMs += performance.now() - started;
        }
      });
      committed = true;
    } finally {
      // lmdb renews its read snapshot before it resolves a commit, so from here on reads see it.
      const started = meter && written ? performance.now() : 0;
      if (written) this.storage.settle(written, committed);
      if (meter && written) meter.writeMs += performance.now() - started;
      // The work went through but its commit did not: what it saved is gone too.
      if (!committed && !threw) this.storage.forgetUnsavedShapes(shapesBefore);
    }
    // With overlappingSync a commit resolves before its fsync; `flushed` waits for the fsync.
    if (durable) await this.root.flushed;
    return result;
  }

  private assertOpen(): void {
    if (this.closing) throw new Error('document store is closed');
  }
}
