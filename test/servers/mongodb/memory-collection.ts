import { ObjectId } from 'bson';
import { defineIndex, indexEntries, sameDefinition, sameKeys, valuePrefix, type IndexDef } from '../../../src/infra/docstore/embedded/index-keys.js';
import { compileMatcher } from '../../../src/infra/docstore/embedded/simple-filter.js';
import { sortDocuments } from '../../../src/infra/docstore/embedded/sort.js';
import type { Document, Filter, IndexSpec, SortSpec } from '../../../src/infra/docstore/port.js';
import { CommandError } from './errors.js';
import { textMatcher, withoutText, type TextIndex } from './text-search.js';

/*
 * One collection of the test server, in memory. Query semantics (mingo, behind the embedded
 * store's matcher), MongoDB's sort order and index key extraction are the embedded store's own
 * pure helpers: the point of this server is the wire protocol and the driver, not a second
 * query engine. Every method runs synchronously, so each command is atomic, as a single-document
 * write is in mongod.
 */

export type Doc = Record<string, unknown>;

interface ServerIndex {
  spec: IndexSpec;
  def: IndexDef;
  /** Unique indexes only: each key (encoded) to the document holding it. */
  owners?: Map<string, string>;
}

export interface FindSpec {
  filter?: Filter;
  sort?: SortSpec;
  skip?: number;
  limit?: number;
}

export class MemoryCollection {
  private readonly docs = new Map<string, Doc>();
  private readonly indexes = new Map<string, ServerIndex>();
  /** The collection's text index (one at most, as in mongod). */
  private text: { name: string; index: TextIndex; key: Doc } | undefined;

  constructor(readonly ns: string) {}

  get size(): number {
    return this.docs.size;
  }

  find({ filter: given = {}, sort, skip = 0, limit = 0 }: FindSpec): Doc[] {
    const text = textMatcher(given, this.text?.index);
    const filter = text ? withoutText(given) : given;
    const plain = compileMatcher(filter);
    const test = text ? (doc: Doc) => text(doc) && plain(doc) : plain;
    const id = filter._id;
    // An _id equality reads one document, as mongod's _id index would; anything else scans.
    const candidates = typeof id === 'string' ? [this.docs.get(idKey(id))].filter((d): d is Doc => d !== undefined) : this.docs.values();
    let matches = [...candidates].filter((doc) => test(doc));
    if (sort && Object.keys(sort).length > 0) matches = sortDocuments(matches as Document[], sort);
    const end = limit > 0 ? skip + limit : undefined;
    return matches.slice(skip, end);
  }

  insert(doc: Doc): Doc {
    const stored = doc._id === undefined ? { _id: new ObjectId(), ...doc } : doc;
    const key = idKey(stored._id);
    if (this.docs.has(key)) throw this.duplicate('_id_', { _id: 1 }, { _id: stored._id });
    this.claimKeys(stored, undefined);
    this.docs.set(key, stored);
    return stored;
  }

  replace(current: Doc, next: Doc): void {
    this.claimKeys(next, current);
    this.docs.set(idKey(current._id), next);
  }

  remove(doc: Doc): void {
    this.releaseKeys(doc);
    this.docs.delete(idKey(doc._id));
  }

  indexList(): Doc[] {
    const list: Doc[] = [{ v: 2, key: { _id: 1 }, name: '_id_' }];
    if (this.text) list.push({ v: 2, key: this.text.key, name: this.text.name, default_language: 'none' });
    for (const { spec } of this.indexes.values()) {
      list.push({
        v: 2,
        key: spec.keys,
        name: spec.name,
        ...(spec.unique ? { unique: true } : {}),
        ...(spec.partialFilterExpression ? { partialFilterExpression: spec.partialFilterExpression } : {}),
      });
    }
    return list;
  }

  /** True when created, false when the identical index exists (mongod's note "all indexes already exist"). */
  createIndex(spec: IndexSpec): boolean {
    if (spec.name === '_id_') return true;
    const existing = this.indexes.get(spec.name);
    if (existing) {
      if (sameDefinition(existing.def, spec)) return false;
      throw new CommandError(86, 'IndexKeySpecsConflict', `An existing index has the same name as the requested index but different options: ${spec.name}`);
    }
    const def = defineIndex(this.ns, spec);
    for (const other of this.indexes.values()) {
      if (sameKeys(other.def, def)) throw new CommandError(85, 'IndexOptionsConflict', `Index already exists with a different name: ${other.spec.name}`);
    }
    const index: ServerIndex = { spec, def };
    if (spec.unique) {
      index.owners = new Map();
      // Built aside first: a duplicate leaves no index behind, as a failed build does in mongod.
      for (const doc of this.docs.values()) {
        for (const key of keysOf(def, doc)) {
          if (index.owners.has(key)) throw this.duplicate(spec.name, spec.keys, keyValue(spec, doc));
          index.owners.set(key, idKey(doc._id));
        }
      }
    }
    this.indexes.set(spec.name, index);
    return true;
  }

  /** A text index (`key` values 'text' after the equality prefix); only one per collection. */
  createTextIndex(name: string, key: Doc): boolean {
    if (this.text) {
      if (this.text.name === name && JSON.stringify(this.text.key) === JSON.stringify(key)) return false;
      throw new CommandError(85, 'IndexOptionsConflict', `An equivalent index already exists: ${this.text.name}`);
    }
    const entries = Object.entries(key);
    const prefix = entries.filter(([, v]) => v !== 'text').map(([k]) => k);
    const fields = entries.filter(([, v]) => v === 'text').map(([k]) => k);
    this.text = { name, key, index: { prefix, fields } };
    return true;
  }

  dropIndex(name: string): boolean {
    if (this.text?.name === name) {
      this.text = undefined;
      return true;
    }
    return this.indexes.delete(name);
  }

  /** Checks every unique index before changing any, so a refused write changes nothing. */
  private claimKeys(next: Doc, current: Doc | undefined): void {
    const owner = idKey(next._id);
    const claims: Array<[Map<string, string>, string[]]> = [];
    for (const index of this.indexes.values()) {
      if (!index.owners) continue;
      const keys = keysOf(index.def, next);
      for (const key of keys) {
        const holder = index.owners.get(key);
        if (holder !== undefined && holder !== owner) throw this.duplicate(index.spec.name, index.spec.keys, keyValue(index.spec, next));
      }
      claims.push([index.owners, keys]);
    }
    if (current) this.releaseKeys(current);
    for (const [owners, keys] of claims) for (const key of keys) owners.set(key, owner);
  }

  private releaseKeys(doc: Doc): void {
    const owner = idKey(doc._id);
    for (const index of this.indexes.values()) {
      if (!index.owners) continue;
      for (const key of keysOf(index.def, doc)) if (index.owners.get(key) === owner) index.owners.delete(key);
    }
  }

  /** mongod's duplicate-key error: code 11000 with the index, its key pattern and the values. */
  private duplicate(index: string, keyPattern: SortSpec, value: Doc): CommandError {
    const shown = Object.entries(value)
      .map(([k, v]) => `${k}: ${JSON.stringify(v)}`)
      .join(', ');
    return new CommandError(11000, 'DuplicateKey', `E11000 duplicate key error collection: ${this.ns} index: ${index} dup key: { ${shown} }`, {
      keyPattern,
      keyValue: value,
    });
  }
}

function keysOf(def: IndexDef, doc: Doc): string[] {
  // The embedded key codec takes string ids; an ObjectId mongod invented keys by its text.
  return indexEntries(def, { ...doc, _id: idKey(doc._id) }).entries.map((e) => valuePrefix(e).toString('hex'));
}

function keyValue(spec: IndexSpec, doc: Doc): Doc {
  const value: Doc = {};
  for (const path of Object.keys(spec.keys)) {
    let node: unknown = doc;
    for (const part of path.split('.')) node = node !== null && typeof node === 'object' ? (node as Doc)[part] : undefined;
    value[path] = node ?? null;
  }
  return value;
}

/** _ids are strings in this project; any other type (an ObjectId mongod would invent) keys by its text. */
export function idKey(id: unknown): string {
  return typeof id === 'string' ? `s:${id}` : `o:${String(id)}`;
}
