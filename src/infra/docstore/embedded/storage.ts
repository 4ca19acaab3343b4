import type { Database, RangeOptions } from 'lmdb';
import { DuplicateKeyError, type Document } from '../port.js';
import type { IndexCatalog } from './index-catalog.js';
import { indexEntries, type DocumentEntries, type IndexDef, type IndexEntry } from './index-keys.js';
import { KeyBuilder, successor } from './key-codec.js';

/** A half-open key range [start, end); end undefined means "to the end of the database". */
export interface KeyRange {
  start: Buffer;
  end: Buffer | undefined;
}

export function prefixRange(prefix: Buffer): KeyRange {
  return { start: prefix, end: successor(prefix) };
}

const NO_ENTRIES: DocumentEntries = { entries: [], multikey: false };

/**
 * Documents and index entries in LMDB. Documents live under [collection, _id]; each index entry
 * maps [collection, index, values..., _id] to the _id. Reads work inside or outside a write
 * transaction; the write methods must run inside one, and keep every index of the collection
 * current, so an aborted transaction never leaves documents and indexes apart.
 */
export class Storage {
  constructor(
    private readonly docs: Database<Document, Buffer>,
    private readonly index: Database<string, Buffer>,
    readonly catalog: IndexCatalog,
  ) {}

  getDoc(collection: string, id: string): Document | undefined {
    return this.docs.get(docKey(collection, id));
  }

  scanDocs(collection: string, reverse = false): Iterable<Document> {
    return this.docs.getRange(rangeOptions(collectionRange(collection), reverse)).map((entry) => entry.value);
  }

  countDocs(collection: string): number {
    return this.docs.getKeysCount(rangeOptions(collectionRange(collection), false));
  }

  /** The _ids of the entries in range, in key order (or reverse). */
  scanIndex(range: KeyRange, reverse: boolean, offset = 0, limit?: number): Iterable<string> {
    const options: RangeOptions = { ...rangeOptions(range, reverse), offset };
    if (limit !== undefined) options.limit = limit;
    return this.index.getRange(options).map((entry) => entry.value);
  }

  countIndex(range: KeyRange): number {
    return this.index.getKeysCount(rangeOptions(range, false));
  }

  insertDoc(collection: string, doc: Document): void {
    const key = docKey(collection, doc._id);
    if (this.docs.doesExist(key)) throw new DuplicateKeyError(collection, doc._id);
    this.updateIndexes(collection, doc._id, undefined, doc);
    this.docs.putSync(key, doc);
  }

  replaceDoc(collection: string, before: Document, after: Document): void {
    this.updateIndexes(collection, after._id, before, after);
    this.docs.putSync(docKey(collection, after._id), after);
  }

  removeDoc(collection: string, doc: Document): void {
    this.updateIndexes(collection, doc._id, doc, undefined);
    this.docs.removeSync(docKey(collection, doc._id));
  }

  /** Indexes the existing documents (checking uniqueness), then registers the index. */
  buildIndex(def: IndexDef): void {
    for (const doc of this.scanDocs(def.collection)) {
      const { entries, multikey } = indexEntries(def, doc);
      for (const entry of entries) this.addEntry(def, entry, doc._id);
      if (multikey) def.multikey = true;
    }
    this.catalog.add(def);
  }

  private updateIndexes(collection: string, id: string, before: Document | undefined, after: Document | undefined): void {
    for (const def of this.catalog.all(collection)) {
      const old = before ? indexEntries(def, before) : NO_ENTRIES;
      const next = after ? indexEntries(def, after) : NO_ENTRIES;
      const oldKeys = new Set(old.entries.map((e) => e.key.toString('hex')));
      const newKeys = new Set(next.entries.map((e) => e.key.toString('hex')));
      for (const entry of old.entries) {
        if (!newKeys.has(entry.key.toString('hex'))) this.index.removeSync(entry.key);
      }
      for (const entry of next.entries) {
        if (!oldKeys.has(entry.key.toString('hex'))) this.addEntry(def, entry, id);
      }
      if (next.multikey && !def.multikey) this.catalog.markMultikey(def);
    }
  }

  private addEntry(def: IndexDef, entry: IndexEntry, id: string): void {
    if (def.unique) {
      for (const other of this.scanIndex(prefixRange(entry.valuePrefix), false, 0, 2)) {
        if (other !== id) throw new DuplicateKeyError(def.collection, `${def.name} dup key: ${describe(entry.values)}`);
      }
    }
    this.index.putSync(entry.key, id);
  }
}

function docKey(collection: string, id: string): Buffer {
  return new KeyBuilder().string(collection).tail(id).build();
}

function collectionRange(collection: string): KeyRange {
  return prefixRange(new KeyBuilder().string(collection).build());
}

/** A reverse range runs from the upper bound (excluded) down to the lower bound (included). */
function rangeOptions(range: KeyRange, reverse: boolean): RangeOptions {
  if (!reverse) return { start: range.start, end: range.end };
  return { start: range.end, end: range.start, reverse: true, exclusiveStart: true, inclusiveEnd: true };
}

function describe(values: unknown[]): string {
  const one = (v: unknown): string => {
    try {
      return JSON.stringify(v) ?? String(v);
    } catch {
      return String(v);
    }
  };
  return `{ ${values.map(one).join(', ')} }`;
}
