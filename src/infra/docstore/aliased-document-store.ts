import type { Collection, Document, DocumentStore, WriteOp, WriteOptions } from './port.js';

/** Where each rebuilt read model's collections live: logical name → physical name. */
const ALIASES = 'read_model_aliases';

type AliasDoc = { _id: string; physical: string };

/**
 * Read models by logical name, stored under whatever physical collection the alias names (the
 * logical name itself until a rebuild swaps one in). Every read and write of the gateway goes
 * through here, so a swap moves readers and the projection's writes together. Without aliases it
 * hands collections and batches straight through.
 */
export class AliasedDocumentStore implements DocumentStore {
  private aliases = new Map<string, string>();
  private readonly handles = new Map<string, Collection>();

  private constructor(readonly inner: DocumentStore) {}

  static async open(inner: DocumentStore): Promise<AliasedDocumentStore> {
    const store = new AliasedDocumentStore(inner);
    await store.refresh();
    return store;
  }

  /** Rereads the aliases (another process may have swapped one). */
  async refresh(): Promise<void> {
    const docs = await this.inner.collection<AliasDoc>(ALIASES).find({});
    this.aliases = new Map(docs.map((d) => [d._id, d.physical]));
  }

  physical(name: string): string {
    return this.aliases.get(name) ?? name;
  }

  /** The write that points `name` at `physical`: put it in the batch that completes the switch. */
  aliasOp(name: string, physical: string): WriteOp {
    return { collection: ALIASES, op: 'replaceOne', filter: { _id: name }, doc: { _id: name, physical }, upsert: true };
  }

  /** Takes effect here once the batch holding `aliasOp` has committed. */
  adopt(name: string, physical: string): void {
    this.aliases.set(name, physical);
  }

  /**
   * A handle that resolves the name on every call: readers that keep a handle (the instance
   * look-up of every request) follow a swap made while the gateway runs.
   */
  collection<T extends Document = Document>(name: string): Collection<T> {
    // One handle per name, made once: every read and write of the gateway asks for one.
    let handle = this.handles.get(name);
    if (!handle) this.handles.set(name, (handle = this.handle(name)));
    return handle as Collection<T>;
  }

  private handle(name: string): Collection {
    const at = () => this.inner.collection(this.physical(name));
    return {
      name,
      findOne: (filter) => at().findOne(filter),
      find: (filter, options) => at().find(filter, options),
      count: (filter) => at().count(filter),
      insertOne: (doc, options) => at().insertOne(doc, options),
      insertMany: (docs, options) => at().insertMany(docs, options),
      replaceOne: (filter, doc, options) => at().replaceOne(filter, doc, options),
      updateOne: (filter, update, options) => at().updateOne(filter, update, options),
      updateMany: (filter, update, options) => at().updateMany(filter, update, options),
      deleteOne: (filter, options) => at().deleteOne(filter, options),
      deleteMany: (filter, options) => at().deleteMany(filter, options),
      createIndex: (spec) => at().createIndex(spec),
      dropIndex: (indexName) => at().dropIndex(indexName),
    };
  }

  batch(ops: WriteOp[], options?: WriteOptions): Promise<void> {
    if (this.aliases.size === 0) return this.inner.batch(ops, options);
    return this.inner.batch(
      ops.map((op) => {
        const physical = this.aliases.get(op.collection);
        return physical === undefined ? op : { ...op, collection: physical };
      }),
      options,
    );
  }

  flush(): Promise<void> {
    return this.inner.flush();
  }

  ping(): Promise<boolean> {
    return this.inner.ping();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
