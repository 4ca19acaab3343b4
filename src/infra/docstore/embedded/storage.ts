import { asBinary, type Database, type RangeOptions } from 'lmdb';
import { BoundedMap } from '../../bounded-map.js';
import { forgetUnsavedShapes, savedShapes } from '../../lmdb-shapes.js';
import { outweighs } from '../../outweighs.js';
import { DuplicateKeyError, type Document } from '../port.js';
import type { IndexCatalog } from './index-catalog.js';
import { entryId, entryValue, groupsOf, indexEntries, NO_ENTRIES, valuePrefix, type IndexDef, type IndexEntry } from './index-keys.js';
import { addToGroup, removeFromGroup, scanGroup, type GroupDb } from './id-groups.js';
import { ByteArena } from './byte-arena.js';
import { deepCopy } from './deep-copy.js';
import { KeyBuilder, successor } from './key-codec.js';
import { pathValues, type PathValues } from './paths.js';
import type { IdBounds } from './query-planner.js';
import { compareValues } from './value-order.js';

/** A half-open key range [start, end); end undefined means "to the end of the database". */
export interface KeyRange {
  start: Buffer;
  end: Buffer | undefined;
}

export function prefixRange(prefix: Buffer): KeyRange {
  return { start: prefix, end: successor(prefix) };
}

/** A document this transaction wrote that must be read back from LMDB rather than from memory. */
const READ_BACK = Symbol('read back');

/** Decoded documents kept for `_id` lookups; every authenticated request loads its instance. */
const CACHED_DOCS = 10_000;
/** Roughly the most a cached document may weigh (see outweighs): the cache stays under ~100 MB. */
const CACHED_DOC_BUDGET = 8 * 1024;
/**
 * Documents committed lately, for the next write transactions only. Projections and the webhook
 * dispatcher write the same documents batch after batch (a chat, an instance's fold, a delivery
 * and then its outcome): the next writer takes the value it left instead of decoding it again.
 */
const RECENT_DOCS = 4096;

/** The documents of an insertMany, keys, values and index entries encoded (Storage.prepareInserts). */
export interface PreparedInserts {
  readonly collection: string;
  /** The collection's indexes the entries were made for (the catalog's list: a new list once it changes). */
  readonly defs: readonly IndexDef[];
  readonly docs: readonly Document[];
  /** Per document: its key, its value, then each index's entry keys, in the order of `defs`. */
  readonly bytes: ByteArena;
  /** Per document and index: the count of entries, 1 when multikey (else 0), then each entry's valueLength. */
  readonly layout: readonly number[];
}

/** The part of lmdb's msgpackr encoder used here. */
interface ValueEncoder {
  encode(value: unknown, mode: number): Buffer & { start?: number; end?: number };
}

/** msgpackr's modes lmdb encodes with in a write transaction (msgpackr's REUSE_BUFFER_MODE, RESET_BUFFER_MODE). */
const REUSE_AND_RESET = 512 | 1024;

/**
 * A document encoded as lmdb would encode it in a put, read before the next encoding: in these
 * modes msgpackr writes every value at the same place of one buffer (answered whole, the value
 * between its start and end), where by default it fills a fresh buffer every few dozen values.
 * A value that saved a new shape comes back as a view of its own.
 */
function encodedValue(encoder: ValueEncoder, doc: Document): Uint8Array {
  const out = encoder.encode(doc, REUSE_AND_RESET);
  return out.start === undefined ? out : out.subarray(out.start, out.end);
}

/** What one write transaction wrote, handed back to `settle` once its commit is over. */
export interface Written {
  readonly seq: number;
  readonly docs: ReadonlyMap<string, Document | null | typeof READ_BACK>;
}

/**
 * Documents and index entries in LMDB. Documents live under [collection, _id]; each index entry
 * maps [collection, index, values..., _id] to the _id. Reads work inside or outside a write
 * transaction; the write methods must run inside one, and keep every index of the collection
 * current, so an aborted transaction never leaves documents and indexes apart.
 */
export class Storage {
  /**
   * Decoded documents by collection and _id. Callers get copies, as from any database driver, and
   * copying is several times cheaper than decoding. A key written by a transaction that has not
   * committed yet is "unsettled": it is neither served from nor added to the cache until the store
   * reports the commit (`settle`), so a reader never caches a value a commit is about to replace.
   */
  private readonly decoded = new BoundedMap<string, CachedDoc>(CACHED_DOCS);
  /** Per key, how many write transactions that wrote it have not settled yet. */
  private readonly unsettled = new Map<string, { pending: number; lastWriter: number }>();
  /**
   * Committed documents by cache key, as their last writer left them, read only inside write
   * transactions (which never change a document they read, so they get it as is). A key is here
   * only while no write of it is unsettled, and only when the stored form decodes to the same value.
   */
  private readonly recent = new BoundedMap<string, Document>(RECENT_DOCS);
  /** The bytes of the prepared insert (see prepareInserts). */
  private readonly arena = new ByteArena();
  /** Where prepareInserts builds each key before it copies it into the arena. */
  private readonly keyScratch = Buffer.allocUnsafe(4096);
  private writing = false;
  private writeSeq = 0;
  /**
   * What the running write transaction has written, by cache key (null: removed). A batch often
   * writes one document several times; later operations read it here instead of decoding it
   * again. Write operations never change a document they read, so it is handed out as is.
   */
  private ownWrites = new Map<string, Document | null | typeof READ_BACK>();

  constructor(
    private readonly docs: Database<Document, Buffer>,
    private readonly index: Database<string, Buffer>,
    readonly catalog: IndexCatalog,
    /** The grouped indexes' runs of _ids (id-groups.ts). */
    private readonly groups: GroupDb,
  ) {}

  /** The count of document shapes saved so far, taken before a write (see forgetUnsavedShapes). */
  savedShapes(): number {
    return savedShapes(this.docs);
  }

  /** After a write that did not commit: the document shapes are read again if it saved any. */
  forgetUnsavedShapes(savedBefore: number): void {
    forgetUnsavedShapes(this.docs, savedBefore);
  }

  /** The store calls these around the work of each write transaction. */
  beginWrite(): void {
    this.writing = true;
    this.writeSeq++;
  }

  /** Answers what the transaction wrote; the store settles it once its commit is done. */
  endWrite(): Written {
    this.writing = false;
    // Handed over whole, not copied: a rebuild's transactions write thousands of documents.
    const written = { seq: this.writeSeq, docs: this.ownWrites };
    this.ownWrites = new Map();
    return written;
  }

  getDoc(collection: string, id: string): Document | undefined {
    const cacheKey = `${collection}\0${id}`;
    if (this.writing) {
      const own = this.ownWrites.get(cacheKey);
      if (own !== undefined && own !== READ_BACK) return own ?? undefined;
      const recent = this.recent.get(cacheKey);
      if (recent !== undefined) return recent;
    }
    const cached = this.decoded.get(cacheKey);
    if (cached !== undefined) return copyCached(cached);
    const doc = this.docs.get(docKey(collection, id));
    // A writer reads what it is about to replace: caching that would be wasted work. Large
    // documents (media chunks, big groups) are read rarely and would crowd out the rest.
    if (doc === undefined || this.writing || this.unsettled.has(cacheKey) || outweighs(doc, CACHED_DOC_BUDGET)) return doc;
    // Decoded objects are dictionaries to V8; spreading one yields a fast object, and copying a
    // fast object by spread costs a fiftieth of copying a dictionary.
    const fast = { ...deepCopy(doc) };
    const entry: CachedDoc = { doc: fast, nested: Object.keys(fast).filter((key) => typeof fast[key] === 'object' && fast[key] !== null) };
    this.decoded.set(cacheKey, entry);
    return doc;
  }

  /**
   * The commit (or rollback) of these writes is over: readers may cache the keys again, and the
   * next writers may take what a committed transaction left, unless a later one wrote it since.
   */
  settle(written: Written, committed: boolean): void {
    const recent: [string, Document][] = [];
    for (const [key, doc] of written.docs) {
      const state = this.unsettled.get(key);
      if (state === undefined) continue;
      if (--state.pending > 0) continue;
      this.unsettled.delete(key);
      if (committed && state.lastWriter === written.seq && doc !== null && doc !== READ_BACK && !outweighs(doc, CACHED_DOC_BUDGET)) {
        recent.push([key, doc]);
      }
    }
    // Only the newest RECENT_DOCS would stay: setting the older ones first only to evict them
    // again was most of the settling of a large transaction. The keys are distinct, and none of
    // them is in `recent` (writing one removed it), so the map ends as it did.
    for (let i = Math.max(0, recent.length - RECENT_DOCS); i < recent.length; i++) {
      const [key, doc] = recent[i] as [string, Document];
      this.recent.set(key, doc);
    }
  }

  /** The collection's documents in _id order (or reverse), within the bounds when given. */
  scanDocs(collection: string, reverse = false, ids?: IdBounds): Iterable<Document> {
    const options = ids ? boundedOptions(collection, ids, reverse) : rangeOptions(collectionRange(collection), reverse);
    return this.docs.getRange(options).map((entry) => entry.value);
  }

  countDocs(collection: string): number {
    return this.docs.getKeysCount(rangeOptions(collectionRange(collection), false));
  }

  /** The _ids of the entries in range, in key order (or reverse). */
  scanIndex(def: IndexDef, range: KeyRange, reverse: boolean, offset = 0, limit?: number): Iterable<string> {
    const options: RangeOptions = { ...rangeOptions(range, reverse), offset };
    if (limit !== undefined) options.limit = limit;
    const idInKey = def.idInKey;
    return this.index.getRange(options).map((entry) => entryId(idInKey, entry.key, entry.value));
  }

  /** The _ids of a grouped index's group, in _id byte order (or reverse), within the bounds when given. */
  scanGroup(group: Buffer, reverse: boolean, ids?: IdBounds): Iterable<string> {
    const low = ids?.low ? Buffer.from(ids.low.id) : undefined;
    const high = ids?.high ? Buffer.from(ids.high.id) : undefined;
    return mapIds(scanGroup(this.groups, group, reverse, low, high), ids);
  }

  /** How many runs a group of a grouped index has: a measure of its size, read from keys alone. */
  countGroupRuns(group: Buffer): number {
    return this.groups.getKeysCount(rangeOptions(prefixRange(group), false));
  }

  countIndex(range: KeyRange): number {
    return this.index.getKeysCount(rangeOptions(range, false));
  }

  insertDoc(collection: string, doc: Document): void {
    const key = docKey(collection, doc._id);
    if (this.docs.doesExist(key)) throw new DuplicateKeyError(collection, doc._id);
    this.unsettle(collection, doc._id, doc);
    this.updateIndexes(collection, doc._id, undefined, doc);
    this.docs.putSync(key, doc);
  }

  /**
   * An insert made in a write transaction that makes nothing but inserts (insertMany). No reader
   * can hold the key cached (it did not exist; a removal clears the caches), and no later
   * operation of the transaction reads it back, so the bookkeeping of insertDoc (unsettled keys,
   * own writes, the check that the stored form decodes alike) is left out: for a rebuild writing
   * a model's every document, it was a third of the cost of each.
   */
  loadDoc(collection: string, doc: Document): void {
    const key = docKey(collection, doc._id);
    if (this.docs.doesExist(key)) throw new DuplicateKeyError(collection, doc._id);
    this.updateIndexes(collection, doc._id, undefined, doc);
    this.docs.putSync(key, doc);
  }

  /**
   * An insertMany's documents encoded before its write transaction, with their index entries:
   * LMDB has one writer, and encoding was half the time a large insert held it while another
   * thread (a rebuild writing history beside its chats) waited to write. Outside a transaction,
   * lmdb saves a shape met for the first time in a transaction of its own, committed at once.
   * Only with no write of this store in flight (see EmbeddedDocumentStore): the encoder then
   * holds no shape a transaction saved that may yet roll back.
   */
  prepareInserts(collection: string, docs: readonly Document[]): PreparedInserts {
    const defs = this.catalog.all(collection);
    const encoder = (this.docs as unknown as { encoder: ValueEncoder }).encoder;
    // One prepared insert at a time (the store prepares only with no write in flight): the
    // arena of the last one has been written, and is filled again.
    const bytes = this.arena;
    bytes.clear();
    const layout: number[] = [];
    // Each key is copied into the arena before the next one is built in the scratch buffer.
    const scratch = this.keyScratch;
    for (const doc of docs) {
      bytes.add(docKey(collection, doc._id, scratch));
      bytes.add(encodedValue(encoder, doc));
      for (const def of defs) {
        // A grouped index's runs are written per group once all documents are in (loadPrepared).
        if (def.grouped) {
          layout.push(0, 0);
          continue;
        }
        const { entries, multikey } = indexEntries(def, doc, scratch);
        layout.push(entries.length, multikey ? 1 : 0);
        for (const entry of entries) {
          bytes.add(entry.key);
          layout.push(entry.valueLength);
        }
      }
    }
    return { collection, defs, docs, bytes, layout };
  }

  /**
   * Inside the write transaction: the prepared documents, as loadDoc would insert them (a new
   * _id each: an existing one fails the insert). Indexes changed since they were prepared: the
   * documents go through loadDoc instead.
   */
  loadPrepared(prepared: PreparedInserts): void {
    const { collection, defs, docs, bytes, layout } = prepared;
    if (this.catalog.all(collection) !== defs) {
      for (const doc of docs) this.loadDoc(collection, doc);
      return;
    }
    let item = 0;
    let at = 0;
    const idStart = collectionPrefix(collection).length;
    for (const doc of docs) {
      const key = bytes.item(item++);
      // One lookup fewer than a check first: the put declines to replace an existing _id.
      if (!putNew(this.docs, key, asBinary(bytes.item(item++)))) throw new DuplicateKeyError(collection, doc._id);
      // The _id's UTF-8, as its entries hold it: the end of the document's key (docKey), not a
      // buffer of its own for each entry.
      const id = key.subarray(idStart) as unknown as string;
      for (const def of defs) {
        const count = layout[at++] as number;
        const multikey = layout[at++] === 1;
        for (let e = 0; e < count; e++) {
          const entryKey = bytes.item(item++);
          const valueLength = layout[at++] as number;
          if (def.unique) this.checkUnique(def, entryKey.subarray(0, valueLength), doc._id, () => entryValues(def, doc, entryKey));
          this.index.putSync(entryKey, def.idInKey ? String.fromCharCode(entryKey.length - valueLength) : id);
        }
        if (multikey && !def.multikey) this.catalog.markMultikey(def);
      }
    }
    for (const def of defs) if (def.grouped) this.addGrouped(def, docs);
  }

  /** The documents' _ids added to their groups of a grouped index: each group's runs written once. */
  private addGrouped(def: IndexDef, docs: Iterable<Document>): void {
    const byGroup = new Map<string, { group: Buffer; ids: Buffer[] }>();
    let multikey = false;
    for (const doc of docs) {
      const { entries, multikey: many } = indexEntries(def, doc);
      multikey ||= many;
      for (const entry of entries) {
        const group = valuePrefix(entry);
        const name = group.toString('latin1');
        let item = byGroup.get(name);
        if (!item) byGroup.set(name, (item = { group, ids: [] }));
        item.ids.push(Buffer.from(doc._id));
      }
    }
    for (const { group, ids } of byGroup.values()) addToGroup(this.groups, group, distinctSorted(ids));
    if (multikey && !def.multikey) this.catalog.markMultikey(def);
  }

  replaceDoc(collection: string, before: Document, after: Document): void {
    this.unsettle(collection, after._id, after);
    this.updateIndexes(collection, after._id, before, after);
    this.docs.putSync(docKey(collection, after._id), after);
  }

  removeDoc(collection: string, doc: Document): void {
    this.unsettle(collection, doc._id, null);
    this.updateIndexes(collection, doc._id, doc, undefined);
    this.docs.removeSync(docKey(collection, doc._id));
  }

  /** Indexes the existing documents (checking uniqueness), then registers the index. */
  buildIndex(def: IndexDef): void {
    if (def.grouped) {
      this.addGrouped(def, this.scanDocs(def.collection));
      this.catalog.add(def);
      return;
    }
    for (const doc of this.scanDocs(def.collection)) {
      const { entries, multikey } = indexEntries(def, doc);
      for (const entry of entries) this.addEntry(def, entry, doc._id);
      if (multikey) def.multikey = true;
    }
    this.catalog.add(def);
  }

  dropIndex(def: IndexDef): void {
    if (def.grouped) {
      for (const key of this.groups.getKeys(rangeOptions(prefixRange(def.prefix), false))) this.groups.removeSync(key);
      this.catalog.remove(def);
      return;
    }
    for (const key of this.index.getKeys(rangeOptions(prefixRange(def.prefix), false))) this.index.removeSync(key);
    this.catalog.remove(def);
  }

  private unsettle(collection: string, id: string, written: Document | null): void {
    const cacheKey = `${collection}\0${id}`;
    if (!this.ownWrites.has(cacheKey)) {
      const state = this.unsettled.get(cacheKey);
      if (state) {
        state.pending++;
        state.lastWriter = this.writeSeq;
      } else {
        this.unsettled.set(cacheKey, { pending: 1, lastWriter: this.writeSeq });
      }
    }
    // What LMDB stores differs from some values (undefined and holes become null, -0 becomes 0,
    // class instances plain objects): such a document is read back from LMDB instead, so later
    // operations see what was stored.
    this.ownWrites.set(cacheKey, written !== null && !storedAlike(written) ? READ_BACK : written);
    this.decoded.delete(cacheKey);
    this.recent.delete(cacheKey);
  }

  private updateIndexes(collection: string, id: string, before: Document | undefined, after: Document | undefined): void {
    for (const def of this.catalog.all(collection)) {
      if (def.grouped) {
        this.updateGroups(def, id, before, after);
        continue;
      }
      // An insert has no old entries to keep: its entries go in without comparing key sets.
      if (before === undefined && after !== undefined) {
        const next = indexEntries(def, after);
        for (const entry of next.entries) this.addEntry(def, entry, id);
        if (next.multikey && !def.multikey) this.catalog.markMultikey(def);
        continue;
      }
      // Most updates leave the indexed fields alone: then the entries are the same keys. Crossing
      // an array must still be seen, since it makes the index multikey.
      if (before && after && def.keys.every(([path]) => sameIndexedValues(pathValues(before, path), pathValues(after, path)))) {
        if (!def.partial || def.partial.holds(before) === def.partial.holds(after)) continue;
      }
      const old = before ? indexEntries(def, before) : NO_ENTRIES;
      const next = after ? indexEntries(def, after) : NO_ENTRIES;
      const oldKeys = new Set(old.entries.map((e) => e.key.toString('latin1')));
      const newKeys = new Set(next.entries.map((e) => e.key.toString('latin1')));
      for (const entry of old.entries) {
        if (!newKeys.has(entry.key.toString('latin1'))) this.index.removeSync(entry.key);
      }
      for (const entry of next.entries) {
        if (!oldKeys.has(entry.key.toString('latin1'))) this.addEntry(def, entry, id);
      }
      if (next.multikey && !def.multikey) this.catalog.markMultikey(def);
    }
  }

  /** A grouped index: the _id leaves the groups it is no longer in and joins the new ones. */
  private updateGroups(def: IndexDef, id: string, before: Document | undefined, after: Document | undefined): void {
    if (before && after && def.keys.every(([path]) => sameIndexedValues(pathValues(before, path), pathValues(after, path)))) return;
    const old = before ? groupsOf(def, before) : [];
    const next = after ? groupsOf(def, after) : [];
    const oldNames = new Set(old.map((g) => g.toString('latin1')));
    const newNames = new Set(next.map((g) => g.toString('latin1')));
    const key = [Buffer.from(id)];
    for (const group of old) if (!newNames.has(group.toString('latin1'))) removeFromGroup(this.groups, group, key);
    for (const group of next) if (!oldNames.has(group.toString('latin1'))) addToGroup(this.groups, group, key);
    if (after && !def.multikey && indexEntries(def, after).multikey) this.catalog.markMultikey(def);
  }

  private addEntry(def: IndexDef, entry: IndexEntry, id: string): void {
    if (def.unique) this.checkUnique(def, valuePrefix(entry), id, () => entry.values);
    this.index.putSync(entry.key, entryValue(def, entry.key, entry.valueLength, id));
  }

  /** A unique index admits one document per values: another one's entry with this prefix fails the write. */
  private checkUnique(def: IndexDef, prefix: Buffer, id: string, values: () => unknown[]): void {
    for (const other of this.scanIndex(def, prefixRange(prefix), false, 0, 2)) {
      if (other !== id) throw new DuplicateKeyError(def.collection, `${def.name} dup key: ${describe(values())}`);
    }
  }
}

/** The values of the document's entry with this key, for the message of a duplicate. */
function entryValues(def: IndexDef, doc: Document, key: Buffer): unknown[] {
  return indexEntries(def, doc).entries.find((entry) => entry.key.equals(key))?.values ?? [];
}

/**
 * Puts a value under a key that must be new; answers false, having written nothing, when the key
 * is there. (lmdb's putSync answers whether it wrote; its typings say void.)
 */
function putNew(db: Database<Document, Buffer>, key: Buffer, value: ReturnType<typeof asBinary>): boolean {
  return (db as unknown as { putSync(key: Buffer, value: unknown, options: typeof NO_OVERWRITE): boolean }).putSync(key, value, NO_OVERWRITE);
}

const NO_OVERWRITE = { noOverwrite: true } as const;

interface CachedDoc {
  doc: Document;
  /** The fields that hold objects: the rest are copied by one spread. */
  nested: string[];
}

function copyCached({ doc, nested }: CachedDoc): Document {
  const copy = { ...doc };
  for (const key of nested) copy[key] = deepCopy(doc[key]);
  return copy;
}

/**
 * Whether decoding the stored form gives this value back: strings, numbers other than -0,
 * booleans, null, Dates, Buffers, dense arrays and plain objects of those. Anything else (undefined,
 * holes, -0, other typed arrays, class instances) comes back changed.
 */
function storedAlike(value: unknown): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return !Object.is(value, -0);
    case 'object': {
      if (value === null || value instanceof Date || Buffer.isBuffer(value)) return true;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) if (!(i in value) || !storedAlike(value[i])) return false;
        return true;
      }
      const proto: unknown = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) return false;
      for (const key in value) if (!storedAlike((value as Record<string, unknown>)[key])) return false;
      return true;
    }
    default:
      return false;
  }
}

/** Ids of a group as strings, only those within the bounds' inclusiveness (scanGroup keeps both ends). */
function* mapIds(ids: Iterable<Buffer>, bounds: IdBounds | undefined): Generator<string> {
  for (const bytes of ids) {
    const id = bytes.toString('utf8');
    if (bounds?.low && !bounds.low.inclusive && id === bounds.low.id) continue;
    if (bounds?.high && !bounds.high.inclusive && id === bounds.high.id) continue;
    yield id;
  }
}

/** Ids sorted by their bytes, each once. */
function distinctSorted(ids: Buffer[]): Buffer[] {
  ids.sort(Buffer.compare);
  return ids.filter((id, i) => i === 0 || !id.equals(ids[i - 1] as Buffer));
}

/** Values that compare equal encode to the same key bytes (key-codec's order is compareValues'). */
function sameIndexedValues(a: PathValues, b: PathValues): boolean {
  return a.throughArray === b.throughArray && compareValues(a.values, b.values) === 0;
}

/** Encoded collection names, the shared start of their documents' keys. */
const collectionPrefixes = new Map<string, Buffer>();

function collectionPrefix(collection: string): Buffer {
  let prefix = collectionPrefixes.get(collection);
  if (prefix === undefined) {
    prefix = new KeyBuilder().string(collection).build();
    collectionPrefixes.set(collection, prefix);
  }
  return prefix;
}

/** [collection, _id]: the collection part is encoded once and reused. `scratch`: see KeyBuilder. */
function docKey(collection: string, id: string, scratch?: Buffer): Buffer {
  return new KeyBuilder(collectionPrefix(collection), scratch).tail(id).build();
}

function collectionRange(collection: string): KeyRange {
  return prefixRange(collectionPrefix(collection));
}

/** A scan of documents between two _ids, each included or not; the collection's ends otherwise. */
function boundedOptions(collection: string, ids: IdBounds, reverse: boolean): RangeOptions {
  const whole = collectionRange(collection);
  const low = ids.low ? docKey(collection, ids.low.id) : whole.start;
  const high = ids.high ? docKey(collection, ids.high.id) : whole.end;
  const lowIncluded = ids.low ? ids.low.inclusive : true;
  const highIncluded = ids.high ? ids.high.inclusive : false;
  if (!reverse) return { start: low, end: high, exclusiveStart: !lowIncluded, inclusiveEnd: highIncluded };
  return { start: high, end: low, reverse: true, exclusiveStart: !highIncluded, inclusiveEnd: lowIncluded };
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
