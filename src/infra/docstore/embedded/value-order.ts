/**
 * MongoDB's comparison order across and within BSON types. In-memory sorts use it directly and the
 * index key codec is built to produce byte strings that order the same way, so results read in
 * index order equal results sorted in memory.
 */

/** Stands for an empty array reached at the end of a path: MongoDB sorts and indexes it below null. */
export const EMPTY_ARRAY: unique symbol = Symbol('emptyArray');

export const Rank = {
  emptyArray: 1,
  null: 2,
  number: 3,
  string: 4,
  object: 5,
  array: 6,
  binary: 7,
  boolean: 8,
  date: 9,
  regex: 10,
} as const;
export type Rank = (typeof Rank)[keyof typeof Rank];

export function typeRank(value: unknown): Rank {
  switch (typeof value) {
    case 'undefined':
      return Rank.null;
    case 'number':
    case 'bigint':
      return Rank.number;
    case 'string':
      return Rank.string;
    case 'boolean':
      return Rank.boolean;
    case 'symbol':
      if (value === EMPTY_ARRAY) return Rank.emptyArray;
      break;
    case 'object':
      if (value === null) return Rank.null;
      if (Array.isArray(value)) return Rank.array;
      if (value instanceof Date) return Rank.date;
      if (value instanceof RegExp) return Rank.regex;
      if (value instanceof Uint8Array) return Rank.binary;
      return Rank.object;
  }
  throw new TypeError(`value of type ${typeof value} cannot be stored or compared`);
}

export function compareValues(a: unknown, b: unknown): number {
  const ra = typeRank(a);
  const rb = typeRank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  switch (ra) {
    case Rank.number:
      return compareNumbers(Number(a), Number(b));
    case Rank.string:
      return compareStrings(a as string, b as string);
    case Rank.object:
      return compareObjects(a as Record<string, unknown>, b as Record<string, unknown>);
    case Rank.array:
      return compareArrays(a as unknown[], b as unknown[]);
    case Rank.binary:
      return compareBinary(a as Uint8Array, b as Uint8Array);
    case Rank.boolean:
      return sign(Number(a) - Number(b));
    case Rank.date:
      return compareNumbers((a as Date).getTime(), (b as Date).getTime());
    case Rank.regex:
      return compareStrings((a as RegExp).source, (b as RegExp).source) || compareStrings((a as RegExp).flags, (b as RegExp).flags);
    default:
      return 0;
  }
}

/** NaN sorts below every other number, as in MongoDB; -0 equals 0. */
function compareNumbers(a: number, b: number): number {
  if (Number.isNaN(a)) return Number.isNaN(b) ? 0 : -1;
  if (Number.isNaN(b)) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * MongoDB compares strings by their UTF-8 bytes. UTF-16 code units order the same way except that
 * surrogates (characters beyond the BMP) must sort after U+E000..U+FFFF, hence the weight shift.
 */
function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return utf8Weight(x) < utf8Weight(y) ? -1 : 1;
  }
  return a.length < b.length ? -1 : 1;
}

function utf8Weight(unit: number): number {
  if (unit >= 0xd800 && unit <= 0xdfff) return unit + 0x2000;
  return unit >= 0xe000 ? unit - 0x800 : unit;
}

/** Field by field: the value's type, then the field name, then the value (MongoDB's order). */
function compareObjects(a: Record<string, unknown>, b: Record<string, unknown>): number {
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  const n = Math.min(ka.length, kb.length);
  for (let i = 0; i < n; i++) {
    const na = ka[i] as string;
    const nb = kb[i] as string;
    const va = a[na];
    const vb = b[nb];
    const byType = typeRank(va) - typeRank(vb);
    if (byType !== 0) return sign(byType);
    const c = compareStrings(na, nb) || compareValues(va, vb);
    if (c !== 0) return c;
  }
  return sign(ka.length - kb.length);
}

function compareArrays(a: unknown[], b: unknown[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const c = compareValues(a[i], b[i]);
    if (c !== 0) return c;
  }
  return sign(a.length - b.length);
}

/** MongoDB orders binary data by length first, then bytes. */
function compareBinary(a: Uint8Array, b: Uint8Array): number {
  return sign(a.length - b.length) || Buffer.compare(a, b);
}

function sign(n: number): number {
  return n < 0 ? -1 : n > 0 ? 1 : 0;
}
