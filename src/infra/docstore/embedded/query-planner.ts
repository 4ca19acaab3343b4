import type { Filter, SortSpec } from '../port.js';
import { analyzeFilter, type FilterShape, type StringRange } from './filter-analysis.js';
import type { IndexDef } from './index-keys.js';
import { KeyBuilder } from './key-codec.js';
import { prefixRange, type KeyRange } from './storage.js';

/**
 * How a query reads its candidates. Every plan yields a superset of the matches (mingo filters
 * them) unless `covered` says the ranges are exactly the filter. `ordered` means candidates arrive
 * already in the requested sort order, so execution can stop after skip + limit matches.
 */
export type Plan =
  | { kind: 'ids'; ids: string[]; ordered: boolean; covered: false }
  | { kind: 'scan'; reverse: boolean; ordered: boolean; covered: boolean; ids?: IdBounds }
  | { kind: 'index'; index: IndexDef; ranges: KeyRange[]; reverse: boolean; ordered: boolean; covered: boolean }
  /**
   * A grouped index (id-groups.ts): the _ids of these groups, in _id order (or reverse), those of
   * every group (`all`, a text search's words) or of any; within the filter's _id bounds.
   */
  | { kind: 'groups'; index: IndexDef; groups: Buffer[]; all: boolean; reverse: boolean; ordered: boolean; covered: false; ids?: IdBounds };

/** Beyond this many $in combinations a shorter index prefix is cheaper than many tiny ranges. */
const MAX_RANGES = 256;

export function planQuery(filter: Filter, sort: SortSpec | undefined, indexes: readonly IndexDef[]): Plan {
  const shape = analyzeFilter(filter);
  const sortFields = Object.entries(sort ?? {});
  const ids = shape.fields.get('_id');
  if (ids) {
    const strings = ids.filter((id): id is string => typeof id === 'string');
    return { kind: 'ids', ids: strings, ordered: sortFields.length === 0, covered: false };
  }

  let best: { plan: Plan; score: number } | undefined;
  for (const index of indexes) {
    if (index.partial && !index.partial.impliedBy(shape.fields)) continue;
    const candidate = index.grouped ? planGroups(index, filter, shape, sortFields) : planIndex(index, shape, sortFields);
    if (!candidate) continue;
    // On a tie, an index that answers the whole filter saves reading the documents.
    const tieCovered = best !== undefined && candidate.score === best.score && candidate.plan.covered && !best.plan.covered;
    if (!best || candidate.score > best.score || tieCovered) best = candidate;
  }
  if (best) return best.plan;

  // Documents are stored in _id order, so a scan can serve a sort on _id alone, and a range of
  // _id (the next page after an _id) can start and stop where it says.
  const [first] = sortFields;
  const byId = sortFields.length === 1 && first?.[0] === '_id';
  const bounds = idBounds(filter);
  return {
    kind: 'scan',
    reverse: byId && first?.[1] === -1,
    ordered: sortFields.length === 0 || byId,
    covered: Object.keys(filter).length === 0,
    ...(bounds ? { ids: bounds } : {}),
  };
}

/** Where a scan of documents may start and stop; the filter still decides every candidate. */
export interface IdBounds {
  low?: { id: string; inclusive: boolean };
  high?: { id: string; inclusive: boolean };
}

/**
 * The range an _id condition of $gt, $gte, $lt and $lte keeps to. Only for ASCII bounds: keys
 * are the _id's UTF-8 bytes, and against an ASCII string every string orders the same by UTF-8
 * bytes as by UTF-16 code units (the query engine's order), so no match is ever outside.
 */
export function idBounds(filter: Filter): IdBounds | undefined {
  const condition = filter._id;
  if (typeof condition !== 'object' || condition === null || Object.getPrototypeOf(condition) !== Object.prototype) return undefined;
  const bounds: IdBounds = {};
  for (const [op, operand] of Object.entries(condition as Record<string, unknown>)) {
    if (typeof operand !== 'string' || !ASCII.test(operand)) continue;
    if (op === '$gt' || op === '$gte') {
      if (!bounds.low || operand > bounds.low.id) bounds.low = { id: operand, inclusive: op === '$gte' };
    } else if (op === '$lt' || op === '$lte') {
      if (!bounds.high || operand < bounds.high.id) bounds.high = { id: operand, inclusive: op === '$lte' };
    }
  }
  return bounds.low || bounds.high ? bounds : undefined;
}

const ASCII = /^[\x00-\x7f]*$/;

/**
 * A grouped index serves a filter pinning every key (a few values at most), the text field's
 * words all required ($all) or any; in _id order when the sort is on _id alone. Scored as
 * planIndex scores, a text search one point more: a word's run is mostly the shorter.
 */
function planGroups(index: IndexDef, filter: Filter, shape: FilterShape, sortFields: Array<[string, 1 | -1]>): { plan: Plan; score: number } | undefined {
  let combinations: unknown[][] = [[]];
  let all = false;
  for (const [path] of index.keys) {
    let values = shape.fields.get(path);
    if (path === index.text && !values) {
      const words = allOf(filter[path]);
      // Every word's run at once only for one combination of the other keys.
      if (!words || combinations.length > 1) return undefined;
      values = words;
      all = words.length > 1;
    }
    if (!values || combinations.length * values.length > MAX_RANGES) return undefined;
    const next: unknown[][] = [];
    for (const combination of combinations) for (const v of values) next.push([...combination, v]);
    combinations = next;
  }
  const directions = index.keys.map(([, dir]) => dir);
  const groups = combinations.map((values) => {
    const builder = new KeyBuilder(index.prefix);
    values.forEach((v, i) => builder.value(v, directions[i] ?? 1));
    return builder.build();
  });
  const constant = new Set(index.keys.filter(([path]) => shape.fields.get(path)?.length === 1).map(([path]) => path));
  const remaining = sortFields.filter(([path]) => !constant.has(path));
  const byId = remaining.length === 1 && remaining[0]?.[0] === '_id';
  const ordered = remaining.length === 0 || byId;
  const reverse = byId && remaining[0]?.[1] === -1;
  const bounds = idBounds(filter);
  const plan: Plan = { kind: 'groups', index, groups, all, reverse, ordered, covered: false, ...(bounds ? { ids: bounds } : {}) };
  return { plan, score: index.keys.length * 2 + (ordered && sortFields.length > 0 ? 1 : 0) + (index.text !== undefined ? 1 : 0) };
}

/** The words of `{$all: [...]}` (strings), else undefined. */
function allOf(condition: unknown): unknown[] | undefined {
  if (typeof condition !== 'object' || condition === null || Object.getPrototypeOf(condition) !== Object.prototype) return undefined;
  const keys = Object.keys(condition);
  const list = (condition as { $all?: unknown }).$all;
  if (keys.length !== 1 || !Array.isArray(list) || list.length === 0 || !list.every((w) => typeof w === 'string')) return undefined;
  return [...new Set(list)];
}

/** Scores an index: two points per pinned leading key, one more when it also yields the sort. */
function planIndex(
  index: IndexDef,
  shape: FilterShape,
  sortFields: Array<[string, 1 | -1]>,
): { plan: Plan; score: number } | undefined {
  const pinned: unknown[][] = [];
  let combinations = 1;
  for (const [path] of index.keys) {
    const values = shape.fields.get(path);
    if (!values || combinations * values.length > MAX_RANGES) break;
    pinned.push(values);
    combinations *= values.length;
  }
  // A multikey index holds some documents several times and in no single sort position.
  const order = !index.multikey ? sortOrder(index, pinned, sortFields) : sortFields.length === 0 ? { reverse: false } : undefined;
  const score = pinned.length * 2 + (order && sortFields.length > 0 ? 1 : 0);
  if (score === 0) return undefined;

  const pinnedPaths = new Set(index.keys.slice(0, pinned.length).map(([path]) => path));
  const covered =
    shape.exact &&
    !index.multikey &&
    [...shape.fields].every(([path, values]) => pinnedPaths.has(path) || index.partial?.decides(path, values) === true);
  const plan: Plan = {
    kind: 'index',
    index,
    ranges: rangesFor(index, pinned, index.multikey ? undefined : stringRangeAfter(index, pinned.length, shape)),
    reverse: order?.reverse ?? false,
    ordered: order !== undefined,
    covered,
  };
  return { plan, score };
}

/**
 * Whether reading the index forward (or backward) yields the requested sort. Sort fields pinned to
 * one value are constant and drop out; the rest must follow the next index keys, all in the index
 * direction or all reversed. A trailing _id is served too once the keys are used up, because
 * entries with equal values are ordered by _id.
 */
function sortOrder(
  index: IndexDef,
  pinned: unknown[][],
  sortFields: Array<[string, 1 | -1]>,
): { reverse: boolean } | undefined {
  const single = pinned.every((values) => values.length === 1);
  const constant = new Set(single ? index.keys.slice(0, pinned.length).map(([path]) => path) : []);
  const remaining = sortFields.filter(([path]) => !constant.has(path));
  if (remaining.length === 0) return { reverse: false };
  if (!single) return undefined;

  let reverse: boolean | undefined;
  for (let i = 0; i < remaining.length; i++) {
    const [path, dir] = remaining[i] as [string, 1 | -1];
    const key = index.keys[pinned.length + i];
    const wantsReverse = key ? key[1] !== dir : dir === -1;
    const matches = key ? key[0] === path : path === '_id' && i === remaining.length - 1;
    if (!matches || (reverse !== undefined && reverse !== wantsReverse)) return undefined;
    reverse = wantsReverse;
  }
  return { reverse: reverse ?? false };
}

/**
 * The string range the filter keeps the first key after the pinned ones to, when it ascends: a
 * seek past a value (`{lane: {$gt: after}}`) starts there instead of reading every entry before.
 * Not for a multikey index, whose arrays mingo compares element by element.
 */
function stringRangeAfter(index: IndexDef, pinnedCount: number, shape: FilterShape): StringRange | undefined {
  const next = index.keys[pinnedCount];
  if (!next || next[1] !== 1) return undefined;
  return shape.ranges.get(next[0]);
}

/**
 * One key range per combination of pinned values, within the string range of the next key when
 * given. String keys are prefix-free (string(), terminated), so the entries of one value are
 * exactly those under its key, and its successor is the first key past them.
 */
function rangesFor(index: IndexDef, pinned: unknown[][], within?: StringRange): KeyRange[] {
  let prefixes: KeyBuilder[] = [new KeyBuilder(index.prefix)];
  pinned.forEach((values, i) => {
    const dir = (index.keys[i] as readonly [string, 1 | -1])[1];
    const next: KeyBuilder[] = [];
    for (const prefix of prefixes) for (const v of values) next.push(prefix.clone().value(v, dir));
    prefixes = next;
  });
  return prefixes.map((p) => {
    if (!within) return prefixRange(p.build());
    const key = (value: string) => p.clone().value(value, 1).build();
    // A string's key ends in its terminator (a zero byte), so it always has a successor.
    const past = (value: string) => prefixRange(key(value)).end as Buffer;
    // Every string (and nothing else, as comparisons only match the bound's type): the keys
    // starting with the string type's rank, which the empty string's key ends in before its terminator.
    const empty = key('');
    const strings = prefixRange(empty.subarray(0, empty.length - 2));
    const { low, high } = within;
    const start = low ? (low.inclusive ? key(low.value) : past(low.value)) : strings.start;
    const end = high ? (high.inclusive ? past(high.value) : key(high.value)) : strings.end;
    // Bounds past each other (`$gt: "b", $lt: "a"`): nothing matches.
    return end && Buffer.compare(start, end) > 0 ? { start, end: start } : { start, end };
  });
}
