import { compileMatcher } from '../infra/docstore/embedded/simple-filter.js';
import type { Document, Filter } from '../infra/docstore/port.js';

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
  /** By the fields' names joined: values joined → _ids. */
  private readonly indexes = new Map<string, HashIndex>();

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
      return Object.keys(filter).length === 1 || compileMatcher(filter)(doc) ? [doc] : [];
    }
    const test = compileMatcher(filter);
    const fields = equalityFields(filter);
    const found: Document[] = [];
    if (fields.length === 0) {
      for (const doc of this.docs.values()) if (test(doc)) found.push(doc);
    } else {
      for (const id of this.index(fields).candidates(fields.map((f) => filter[f] as string))) {
        const doc = this.docs.get(id) as Document;
        if (test(doc)) found.push(doc);
      }
    }
    // In _id order, as the store hands them out: an updateOne or deleteOne that matches several
    // takes the same one. Several matches are rare (a deleteMany of an instance).
    if (found.length > 1) found.sort((a, b) => (a._id < b._id ? -1 : a._id > b._id ? 1 : 0));
    return found;
  }

  private index(fields: readonly string[]): HashIndex {
    const name = fields.join('\0');
    let index = this.indexes.get(name);
    if (!index) {
      index = new HashIndex(fields);
      for (const doc of this.docs.values()) index.add(doc);
      this.indexes.set(name, index);
    }
    return index;
  }
}

/** Top-level fields the filter compares with a plain string, sorted: what an index can key on. */
function equalityFields(filter: Filter): string[] {
  const fields: string[] = [];
  for (const field in filter) {
    if (!field.startsWith('$') && !field.includes('.') && typeof filter[field] === 'string') fields.push(field);
  }
  return fields.sort();
}

class HashIndex {
  private readonly keyed = new Map<string, Set<string>>();
  /** Documents with a field that is not a string: tried for every lookup. */
  private readonly aside = new Set<string>();

  constructor(private readonly fields: readonly string[]) {}

  add(doc: Document): void {
    const key = this.keyOf(doc);
    if (key === undefined) this.aside.add(doc._id);
    else {
      let ids = this.keyed.get(key);
      if (!ids) this.keyed.set(key, (ids = new Set()));
      ids.add(doc._id);
    }
  }

  remove(doc: Document): void {
    const key = this.keyOf(doc);
    if (key === undefined) this.aside.delete(doc._id);
    else {
      const ids = this.keyed.get(key);
      ids?.delete(doc._id);
      if (ids?.size === 0) this.keyed.delete(key);
    }
  }

  /** A document written again: most writes leave the indexed fields as they were. */
  move(before: Document | undefined, after: Document): void {
    if (before !== undefined) {
      const key = this.keyOf(before);
      if (key !== undefined && key === this.keyOf(after)) return;
      this.remove(before);
    }
    this.add(after);
  }

  candidates(values: readonly string[]): string[] {
    const key = joined(values);
    const ids = key === undefined ? undefined : this.keyed.get(key);
    if (this.aside.size === 0) return ids ? [...ids] : [];
    return [...(ids ?? []), ...this.aside];
  }

  private keyOf(doc: Document): string | undefined {
    if (this.fields.length === 1) {
      const value = doc[this.fields[0] as string];
      return typeof value === 'string' && !value.includes(SEPARATOR) ? value : undefined;
    }
    const values: string[] = [];
    for (const field of this.fields) {
      const value = doc[field];
      if (typeof value !== 'string') return undefined;
      values.push(value);
    }
    return joined(values);
  }
}

const SEPARATOR = '\u0000';

/** The values as one key; undefined when one holds the separator (then the document is kept aside). */
function joined(values: readonly string[]): string | undefined {
  for (const value of values) if (value.includes(SEPARATOR)) return undefined;
  return values.join(SEPARATOR);
}
