import type { Document, Filter, IndexSpec } from '../port.js';
import { KeyBuilder } from './key-codec.js';
import { compilePartialFilter, type PartialFilter } from './partial-filter.js';
import { pathValues } from './paths.js';
import { compareValues } from './value-order.js';

type IndexKeys = ReadonlyArray<readonly [path: string, direction: 1 | -1]>;

export interface IndexDef {
  readonly collection: string;
  readonly name: string;
  readonly keys: IndexKeys;
  readonly unique: boolean;
  /** Only documents matching it have entries (MongoDB's partialFilterExpression). */
  readonly partial: PartialFilter | undefined;
  /** Some document reached an array on an indexed path: one document may own several entries. */
  multikey: boolean;
  /** Queries may use it only once the transaction that built it has committed. */
  ready: boolean;
  /** Shared by every entry of this index. */
  readonly prefix: Buffer;
  /** A text index: its last key is this field, an array of words (see IndexSpec.text). */
  readonly text: string | undefined;
  /**
   * Stored as runs of _ids per group of values (id-groups.ts), not one entry per document: every
   * text index, and those declared `grouped`. An index of a store made before text indexes were
   * grouped is not, until createIndex rebuilds it (write-ops.ts).
   */
  readonly grouped: boolean;
  /**
   * An entry's value is the length of the _id ending its key (one character), not the _id again:
   * indexes made from this version on. Those of older stores keep the _id as the value.
   */
  readonly idInKey: boolean;
}

export interface IndexEntry {
  /** prefix + encoded values + _id: one LMDB key per (values, document). */
  key: Buffer;
  /**
   * How many bytes of `key` are prefix + encoded values: the range a unique index must keep to
   * one document (valuePrefix). A length, not a second buffer: only unique indexes read it.
   */
  valueLength: number;
  values: unknown[];
}

export interface DocumentEntries {
  entries: IndexEntry[];
  multikey: boolean;
}

/** Guards against a document whose arrays would multiply into an unbounded number of entries. */
const MAX_ENTRIES_PER_DOCUMENT = 10_000;

export function defineIndex(
  collection: string,
  spec: IndexSpec,
  multikey = false,
  ready = false,
  grouped = spec.grouped === true || spec.text !== undefined,
  idInKey = true,
): IndexDef {
  const keys = specKeys(spec);
  if (keys.length === 0) throw new TypeError(`index ${spec.name} has no keys`);
  for (const [path, dir] of keys) {
    if (path === '' || (dir !== 1 && dir !== -1)) throw new TypeError(`index ${spec.name}: invalid key ${path}: ${String(dir)}`);
  }
  const partial = spec.partialFilterExpression === undefined ? undefined : compilePartialFilter(spec.partialFilterExpression);
  if (grouped && (partial || spec.unique === true)) throw new TypeError(`index ${spec.name}: a grouped or text index can be neither partial nor unique here`);
  const prefix = new KeyBuilder().string(collection).string(spec.name).build();
  return { collection, name: spec.name, keys, unique: spec.unique === true, partial, multikey, ready, prefix, text: spec.text, grouped, idInKey };
}

/** The index's keys; a text index's words come last, one entry per word (multikey). */
function specKeys(spec: IndexSpec): Array<[string, 1 | -1]> {
  const keys = Object.entries(spec.keys);
  return spec.text === undefined ? keys : [...keys, [spec.text, 1]];
}

/** Same name and same definition: createIndex is then a no-op. */
export function sameDefinition(def: IndexDef, spec: IndexSpec): boolean {
  const keys = specKeys(spec);
  return (
    def.unique === (spec.unique === true) &&
    def.text === spec.text &&
    def.grouped === (spec.grouped === true || spec.text !== undefined) &&
    samePartial(def.partial?.expression, spec.partialFilterExpression) &&
    keys.length === def.keys.length &&
    keys.every(([path, dir], i) => def.keys[i]?.[0] === path && def.keys[i]?.[1] === dir)
  );
}

/** Same definition but stored the old way (a text index of one entry per word): createIndex rebuilds it. */
export function sameButLayout(def: IndexDef, spec: IndexSpec): boolean {
  return !def.grouped && (spec.grouped === true || spec.text !== undefined) && sameDefinition({ ...def, grouped: true }, spec);
}

/** What an entry of this index holds as its value (see IndexDef.idInKey). */
export function entryValue(def: IndexDef, key: Buffer, valueLength: number, id: string): string {
  return def.idInKey ? String.fromCharCode(key.length - valueLength) : id;
}

/** The _id of an entry read back. */
export function entryId(idInKey: boolean, key: Buffer, value: string): string {
  return idInKey ? key.toString('utf8', key.length - value.charCodeAt(0)) : value;
}

/** The groups (prefix and values, no _id) a document is in, for a grouped index. */
export function groupsOf(def: IndexDef, doc: Document): Buffer[] {
  return indexEntries(def, doc).entries.map((entry) => valuePrefix(entry));
}

/** Same keys over the same documents: as in MongoDB, a second such index is refused. */
export function sameKeys(a: IndexDef, b: IndexDef): boolean {
  return (
    samePartial(a.partial?.expression, b.partial?.expression) &&
    a.keys.length === b.keys.length &&
    a.keys.every(([path, dir], i) => b.keys[i]?.[0] === path && b.keys[i]?.[1] === dir)
  );
}

function samePartial(a: Filter | undefined, b: Filter | undefined): boolean {
  return a === undefined || b === undefined ? a === b : compareValues(a, b) === 0;
}

/** What a removed document, or one a partial filter leaves out, has in an index. */
export const NO_ENTRIES: DocumentEntries = { entries: [], multikey: false };

/** The entry's key up to its values: every entry of a unique index with these values starts with it. */
export const valuePrefix = (entry: IndexEntry): Buffer => entry.key.subarray(0, entry.valueLength);

/**
 * Missing fields index as null, so (as in MongoDB) a unique index admits one document without the
 * field. `scratch`: see KeyBuilder (a document with a single entry has its key built there).
 */
export function indexEntries(def: IndexDef, doc: Document, scratch?: Buffer): DocumentEntries {
  if (def.partial && !def.partial.holds(doc)) return NO_ENTRIES;
  const single = singleEntry(def, doc, scratch);
  if (single) return single;
  const fields = def.keys.map(([path]) => pathValues(doc, path));
  let combinations: unknown[][] = [[]];
  for (const { values } of fields) {
    const next: unknown[][] = [];
    for (const combination of combinations) for (const v of values) next.push([...combination, v]);
    if (next.length > MAX_ENTRIES_PER_DOCUMENT) throw new RangeError(`document ${doc._id} has too many keys for index ${def.name}`);
    combinations = next;
  }
  const seen = new Set<string>();
  const entries: IndexEntry[] = [];
  for (const values of combinations) {
    const builder = new KeyBuilder(def.prefix);
    values.forEach((v, i) => builder.value(v, (def.keys[i] as readonly [string, 1 | -1])[1]));
    const valueLength = builder.size;
    const key = builder.tail(doc._id).build();
    // Only an array can repeat a combination; one combination needs no bookkeeping.
    if (combinations.length > 1) {
      const id = key.toString('latin1');
      if (seen.has(id)) continue;
      seen.add(id);
    }
    entries.push({ key, valueLength, values });
  }
  return { entries, multikey: fields.some((f) => f.throughArray) };
}

/**
 * Most index writes: every key a top-level field holding no array or object (a string, a number,
 * or missing). One entry, built without walking paths or combining values: the same key bytes
 * the general path builds, at a fraction of the cost.
 */
function singleEntry(def: IndexDef, doc: Document, scratch: Buffer | undefined): DocumentEntries | undefined {
  const values: unknown[] = [];
  for (const [path] of def.keys) {
    if (path.includes('.')) return undefined;
    // Read as pathValues reads it (inherited members included), so both build the same key.
    const value: unknown = doc[path];
    if (value !== null && (typeof value === 'object' || typeof value === 'function')) return undefined;
    values.push(value ?? null);
  }
  const builder = new KeyBuilder(def.prefix, scratch);
  for (let i = 0; i < values.length; i++) builder.value(values[i], (def.keys[i] as readonly [string, 1 | -1])[1]);
  const valueLength = builder.size;
  const key = builder.tail(doc._id).build();
  return { entries: [{ key, valueLength, values }], multikey: false };
}
