import type { Database } from 'lmdb';
import type { Filter } from '../port.js';
import { defineIndex, type IndexDef } from './index-keys.js';

interface StoredIndex {
  keys: Record<string, 1 | -1>;
  unique: boolean;
  multikey: boolean;
  partialFilterExpression?: Filter;
  /** A text index's words field (not among `keys`). */
  text?: string;
  /** Stored as runs of _ids (IndexDef.grouped); absent for a text index of the old layout. */
  grouped?: boolean;
  /** Entries hold the _id's length, not the _id (IndexDef.idInKey); absent in older stores. */
  idInKey?: boolean;
}

/** A collection without indexes: one list, so that it stays the same list (see register). */
const NONE: readonly IndexDef[] = [];

export type CatalogDb = Database<StoredIndex, [collection: string, name: string]>;

/**
 * The declared indexes, persisted so a reopened store keeps maintaining and using them. Writers see
 * every index (they must keep all of them current); queries see only those marked ready.
 */
export class IndexCatalog {
  private readonly byCollection = new Map<string, IndexDef[]>();

  constructor(private readonly db: CatalogDb) {
    for (const { key, value } of db.getRange()) {
      const [collection, name] = key;
      const partial = value.partialFilterExpression === undefined ? {} : { partialFilterExpression: value.partialFilterExpression };
      const text = value.text === undefined ? {} : { text: value.text };
      this.register(defineIndex(collection, { name, keys: value.keys, unique: value.unique, ...partial, ...text }, value.multikey, true, value.grouped === true, value.idInKey === true));
    }
  }

  all(collection: string): readonly IndexDef[] {
    return this.byCollection.get(collection) ?? NONE;
  }

  ready(collection: string): IndexDef[] {
    return this.all(collection).filter((def) => def.ready);
  }

  get(collection: string, name: string): IndexDef | undefined {
    return this.all(collection).find((def) => def.name === name);
  }

  /** Inside the write transaction that built the index's entries. */
  add(def: IndexDef): void {
    this.save(def);
    this.register(def);
  }

  /** Inside the write transaction that removed the index's entries; `restore` if it aborts. */
  remove(def: IndexDef): void {
    this.db.removeSync([def.collection, def.name]);
    const list = this.all(def.collection).filter((other) => other !== def);
    this.byCollection.set(def.collection, list);
  }

  /** Takes back a `remove` whose transaction rolled back. */
  restore(def: IndexDef): void {
    if (!this.get(def.collection, def.name)) this.register(def);
  }

  /** Inside a write transaction; an aborted transaction leaves the flag set, which is only conservative. */
  markMultikey(def: IndexDef): void {
    def.multikey = true;
    this.save(def);
  }

  /** A new list, never the old one changed: an insert prepared for the old list sees the change (Storage.loadPrepared). */
  private register(def: IndexDef): void {
    this.byCollection.set(def.collection, [...this.all(def.collection), def]);
  }

  private save(def: IndexDef): void {
    this.db.putSync([def.collection, def.name], {
      keys: Object.fromEntries(def.text === undefined ? def.keys : def.keys.slice(0, -1)),
      ...(def.text === undefined ? {} : { text: def.text }),
      ...(def.grouped ? { grouped: true } : {}),
      ...(def.idInKey ? { idInKey: true } : {}),
      unique: def.unique,
      multikey: def.multikey,
      ...(def.partial ? { partialFilterExpression: def.partial.expression } : {}),
    });
  }
}
