import { matcherNow } from '../infra/docstore/embedded/simple-filter.js';
import type { Document, Filter, Update } from '../infra/docstore/port.js';

/**
 * One collection of a read model folded in memory, with hash indexes made on demand for the
 * equality filters it is written with. The chats projection finds a chat by instance and jid
 * (its _id stays the one it was first seen under): without an index each write scanned every
 * chat, and a rebuild ran at a few hundred events per second.
 *
 * An index only narrows the candidates; the filter itself decides. A document whose indexed field
 * holds anything but a string (an array may match an equality too) is kept aside and always tried,
 * so a lookup finds exactly what a scan would.
 */
export class FoldedCollection {
  private readonly docs = new Map<string, Document>();
  /** By the fields' names joined: one hash index each. */
  private readonly indexes = new Map<string, HashIndex>();

  /** Filter shapes seen, by their equality fields in order: the index that serves each (see index). */
  private readonly shapes: ShapeNode = { next: new Map(), index: undefined };
  /** Fields some hash index keys on: an update touching none leaves every index as it is. */
  private readonly indexed = new Set<string>();

  /** Whether an update's $set, $unset or $inc names a field an index keys on (or _id). */
  indexesAny(update: Update): boolean {
    for (const op in update) {
      if (op === '$setOnInsert') continue;
      for (const field in update[op]) if (field === '_id' || this.indexed.has(field)) return true;
    }
    return false;
  }

  get(id: string): Document | undefined {
    return this.docs.get(id);
  }

  set(doc: Document): void {
    const before = this.docs.get(doc._id);
    for (const index of this.indexes.values()) index.move(before, doc);
    this.docs.set(doc._id, doc);
  }

  delete(id: string): void {
    const before = this.docs.get(id);
    if (!before) return;
    for (const index of this.indexes.values()) index.remove(before);
    this.docs.delete(id);
  }

  values(): IterableIterator<Document> {
    return this.docs.values();
  }

  /** The documents the filter matches, in _id order. */
  matching(filter: Filter): Document[] {
    if (typeof filter._id === 'string') {
      const doc = this.docs.get(filter._id);
      if (!doc) return [];
      return Object.keys(filter).length === 1 || matcherNow(filter)(doc) ? [doc] : [];
    }
    // The filter's shape (its equality fields in order) picks the index, walked without building
    // a key: a rebuild asks this several times per event.
    let node = this.shapes;
    let equalities = 0;
    let fields = 0;
    for (const field in filter) {
      fields++;
      if (!isEqualityField(filter, field)) continue;
      equalities++;
      let next = node.next.get(field);
      if (!next) node.next.set(field, (next = { next: new Map(), index: undefined }));
      node = next;
    }
    const found: Document[] = [];
    if (equalities === 0) {
      const test = matcherNow(filter);
      for (const doc of this.docs.values()) if (test(doc)) found.push(doc);
    } else {
      const index = (node.index ??= this.index(equalityFields(filter)));
      // A keyed candidate equals the filter on the index's fields; when those are the whole
      // filter, it matches without a test (the common `{instance_id, jid}`). Else the filter
      // decides, compiled at once so that a malformed one throws as the store's does.
      let test = index.fields.length === fields ? undefined : matcherNow(filter);
      const keyed = index.lookup(filter);
      if (typeof keyed === 'string') {
        const doc = this.docs.get(keyed) as Document;
        if (test === undefined || test(doc)) found.push(doc);
      } else if (keyed !== undefined) {
        for (const id of keyed) {
          const doc = this.docs.get(id) as Document;
          if (test === undefined || test(doc)) found.push(doc);
        }
      }
      for (const id of index.aside) {
        const doc = this.docs.get(id) as Document;
        if ((test ??= matcherNow(filter))(doc)) found.push(doc);
      }
    }
    // In _id order, as the store hands them out: an updateOne or deleteOne that matches several
    // takes the same one. Several matches are rare (a deleteMany of an instance).
    if (found.length > 1) found.sort((a, b) => (a._id < b._id ? -1 : a._id > b._id ? 1 : 0));
    return found;
  }

  /**
   * The index for these equality fields: one on exactly them, else the widest one on some of them
   * (it narrows as well, and a field left out of the indexes, such as a chat's name compared with
   * '', can be updated in place), else a new one on all of them.
   */
  private index(fields: readonly string[]): HashIndex {
    fields = [...fields].sort();
    const name = fields.join('\0');
    let index = this.indexes.get(name);
    for (const candidate of index ? [] : this.indexes.values()) {
      if (candidate.fields.every((f) => fields.includes(f)) && (!index || candidate.fields.length > index.fields.length)) index = candidate;
    }
    if (!index) {
      index = new HashIndex(fields);
      for (const doc of this.docs.values()) index.add(doc);
      this.indexes.set(name, index);
      for (const field of fields) this.indexed.add(field);
    }
    return index;
  }
}

/** A step of the walk from a filter's equality fields to its index (FoldedCollection.matching). */
interface ShapeNode {
  next: Map<string, ShapeNode>;
  index: HashIndex | undefined;
}

const isEqualityField = (filter: Filter, field: string) => !field.startsWith('$') && !field.includes('.') && typeof filter[field] === 'string';

/** Top-level fields the filter compares with a plain string, in the filter's order: what an index can key on. */
function equalityFields(filter: Filter): string[] {
  const fields: string[] = [];
  for (const field in filter) if (isEqualityField(filter, field)) fields.push(field);
  return fields;
}

class HashIndex {
  /**
   * One map per field, in the fields' order, down to the _id holding those values, or the _ids
   * when several do. Walked by the values as they are, never joined into a key: a joined key was
   * a new string to build and hash on every lookup, several per event. Nearly every path ends at
   * one document (a chat by instance and jid): a Set for each was most of the index's memory.
   */
  private readonly keyed: Level = new Map();
  /** Documents with a field that is not a string: tried for every lookup. */
  readonly aside = new Set<string>();

  constructor(readonly fields: readonly string[]) {}

  add(doc: Document): void {
    const last = this.leafMap(doc);
    if (last === undefined) {
      this.aside.add(doc._id);
      return;
    }
    const value = doc[this.fields[this.fields.length - 1] as string] as string;
    const ids = last.get(value) as Leaf | undefined;
    if (ids === undefined) last.set(value, doc._id);
    else if (typeof ids === 'string') {
      if (ids !== doc._id) last.set(value, new Set([ids, doc._id]));
    } else ids.add(doc._id);
  }

  remove(doc: Document): void {
    if (!this.keyable(doc)) {
      this.aside.delete(doc._id);
      return;
    }
    this.removeFrom(this.keyed, doc, 0);
  }

  /** A document written again: most writes leave the indexed fields as they were. */
  move(before: Document | undefined, after: Document): void {
    if (before !== undefined) {
      if (this.keyable(before) && this.keyable(after) && this.fields.every((f) => before[f] === after[f])) return;
      this.remove(before);
    }
    this.add(after);
  }

  /** The _id or _ids whose fields equal the filter's (every field of the index is a string in it). */
  lookup(filter: Filter): string | Set<string> | undefined {
    let found: Level | Leaf | undefined = this.keyed;
    for (let i = 0; i < this.fields.length; i++) {
      const value = filter[this.fields[i] as string];
      if (typeof value !== 'string' || found === undefined) return undefined;
      // Every level but the last holds maps (the path has one step per field).
      found = (found as Level).get(value);
    }
    return found as Leaf | undefined;
  }

  /** Whether every field holds a string: else the document is kept aside. */
  private keyable(doc: Document): boolean {
    for (let i = 0; i < this.fields.length; i++) if (typeof doc[this.fields[i] as string] !== 'string') return false;
    return true;
  }

  /** The map the last field's value keys into, made on the way; undefined when the document is not keyable. */
  private leafMap(doc: Document): Level | undefined {
    if (!this.keyable(doc)) return undefined;
    let level = this.keyed;
    for (let i = 0; i < this.fields.length - 1; i++) {
      const value = doc[this.fields[i] as string] as string;
      let next = level.get(value) as Level | undefined;
      if (next === undefined) level.set(value, (next = new Map()));
      level = next;
    }
    return level;
  }

  /** Takes the document's _id out of the path of its values, and the maps it leaves empty. */
  private removeFrom(level: Level, doc: Document, depth: number): void {
    const value = doc[this.fields[depth] as string] as string;
    const next = level.get(value);
    if (next === undefined) return;
    if (depth < this.fields.length - 1) {
      this.removeFrom(next as Level, doc, depth + 1);
      if ((next as Level).size === 0) level.delete(value);
      return;
    }
    const ids = next as Leaf;
    if (typeof ids === 'string') {
      if (ids === doc._id) level.delete(value);
      return;
    }
    ids.delete(doc._id);
    if (ids.size === 1) level.set(value, ids.values().next().value as string);
  }
}

/** The _id, or _ids, at the end of an index's path. */
type Leaf = string | Set<string>;
/** One field's values → the next field's map, or the leaf after the last field. */
type Level = Map<string, Level | Leaf>;
