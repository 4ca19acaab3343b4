import type { Query } from 'mingo';
import { mingo } from './mingo.js';
import type { Filter } from '../port.js';

/** true or false when decided here; undefined when the query engine must decide. */
export type SimpleTest = (doc: Record<string, unknown>) => boolean | undefined;

type Scalar = string | number | boolean;
type Comparison = '$eq' | '$ne' | '$lt' | '$lte' | '$gt' | '$gte';

const RANGE_OPS = new Set(['$lt', '$lte', '$gt', '$gte']);
const ALL_OPS = new Set(['$eq', '$ne', ...RANGE_OPS]);

/**
 * The filters projections use on every write, `{_id, field: {$lte: n}}` and the like, decided
 * without compiling a query: top-level fields only, equality with a string, finite number or
 * boolean, `$in` a non-empty list of those, range comparisons with finite numbers or strings, and
 * `$exists` with a boolean. A document
 * whose field holds anything else (missing, null, an array, an object, another type) is left to
 * the query engine, which has MongoDB's rules for those. Answers undefined for any other filter.
 */
export function compileSimpleFilter(filter: Filter): SimpleTest | undefined {
  if (!isSimpleFilter(filter)) return undefined;
  // A copy taken now (the caller may change its filter later), with each $in list as a set: a
  // long list is tested against every candidate document.
  // No prototype: a field named __proto__ stays a field.
  const compiled: Filter = Object.create(null) as Filter;
  for (const field in filter) {
    const value = filter[field];
    if (isScalar(value)) {
      compiled[field] = value;
      continue;
    }
    const conditions: Record<string, unknown> = {};
    for (const [op, operand] of Object.entries(value as Record<string, unknown>)) conditions[op] = op === '$in' ? new Set(operand as Scalar[]) : operand;
    compiled[field] = conditions;
  }
  return (doc) => decideSimple(compiled, doc);
}

/**
 * Whether compileSimpleFilter takes the filter, decided without building anything: a rebuild's
 * fold asks it for several filters per event (see decideSimple).
 */
export function isSimpleFilter(filter: Filter): boolean {
  for (const field in filter) {
    if (field === '' || field.startsWith('$') || field.includes('.')) return false;
    const value = filter[field];
    if (isScalar(value)) continue;
    if (typeof value !== 'object' || value === null || Array.isArray(value) || Object.getPrototypeOf(value) !== Object.prototype) return false;
    let ops = 0;
    for (const op in value) {
      ops++;
      const operand = (value as Record<string, unknown>)[op];
      if (op === '$in') {
        if (!Array.isArray(operand) || operand.length === 0 || !operand.every(isScalar)) return false;
        continue;
      }
      if (op === '$exists') {
        // The query engine refuses a __proto__ path: it keeps that answer.
        if (typeof operand !== 'boolean' || field === '__proto__') return false;
        continue;
      }
      if (!ALL_OPS.has(op) || !isScalar(operand)) return false;
      // Strings compare as the query engine compares them (code unit order): the due times the
      // billing timer looks for at every start, ISO strings, need no query compiled.
      if (RANGE_OPS.has(op) && typeof operand !== 'number' && typeof operand !== 'string') return false;
    }
    if (ops === 0) return false;
  }
  return true;
}

/**
 * A filter isSimpleFilter takes, read as it is against the document: true or false when decided
 * here, undefined when the query engine must decide. An $in list may also be a set (compiled).
 */
export function decideSimple(filter: Filter, doc: Record<string, unknown>): boolean | undefined {
  for (const field in filter) {
    const value = filter[field];
    const actual = doc[field];
    if (isScalar(value)) {
      if (typeof actual !== typeof value || (typeof actual === 'number' && !Number.isFinite(actual))) return undefined;
      if (actual !== value) return false;
      continue;
    }
    const conditions = value as Record<string, unknown>;
    for (const op in conditions) {
      const operand = conditions[op];
      if (op === '$exists') {
        // A top-level field, as the query engine resolves it: an inherited name (toString) is
        // absent unless the document has it; one that another prototype could answer is left to it.
        const own = Object.hasOwn(doc, field);
        if (!own && actual !== undefined && !(field in Object.prototype)) return undefined;
        if ((own && actual !== undefined) !== operand) return false;
        continue;
      }
      if (op === '$in') {
        if (!isScalar(actual)) return undefined;
        const listed = operand instanceof Set ? operand.has(actual) : (operand as Scalar[]).includes(actual);
        if (!listed) return false;
        continue;
      }
      if (typeof actual !== typeof operand || (typeof actual === 'number' && !Number.isFinite(actual))) return undefined;
      if (!holds(op as Comparison, actual as Scalar, operand as Scalar)) return false;
    }
  }
  return true;
}

/**
 * compileMatcher for a filter tested now against a few documents and then dropped (a rebuild's
 * fold tests a fresh one or two per event): a simple filter is read as it is, not copied and
 * compiled into conditions first. The query engine still decides what the simple reading leaves
 * open, and a filter it does not take is compiled at once, so a malformed one throws alike.
 */
export function matcherNow(filter: Filter): (doc: Record<string, unknown>) => boolean {
  if (!isSimpleFilter(filter)) {
    const query = new (mingo().Query)(filter);
    return (doc) => query.test(doc);
  }
  let query: Query | undefined;
  return (doc) => decideSimple(filter, doc) ?? (query ??= new (mingo().Query)(filter)).test(doc);
}

/** Decides simple filters directly and compiles a mingo query only when one is needed. */
export function compileMatcher(filter: Filter): (doc: Record<string, unknown>) => boolean {
  const simple = compileSimpleFilter(filter);
  // A filter the simple test does not take is compiled at once, so a malformed one throws even
  // when nothing matches it.
  let query = simple ? undefined : new (mingo().Query)(filter);
  return (doc) => {
    const verdict = simple?.(doc);
    if (verdict !== undefined) return verdict;
    query ??= new (mingo().Query)(filter);
    return query.test(doc);
  };
}

function holds(op: Comparison, a: Scalar, b: Scalar): boolean {
  switch (op) {
    case '$eq':
      return a === b;
    case '$ne':
      return a !== b;
    case '$lt':
      return a < b;
    case '$lte':
      return a <= b;
    case '$gt':
      return a > b;
    case '$gte':
      return a >= b;
  }
}

function isScalar(value: unknown): value is Scalar {
  return typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));
}
