import { Query } from 'mingo';
import type { Filter } from '../port.js';

/** true or false when decided here; undefined when the query engine must decide. */
export type SimpleTest = (doc: Record<string, unknown>) => boolean | undefined;

type Scalar = string | number | boolean;
type Condition = { op: '$eq' | '$ne' | '$lt' | '$lte' | '$gt' | '$gte'; operand: Scalar } | { op: '$in'; operand: Set<Scalar> };

const RANGE_OPS = new Set(['$lt', '$lte', '$gt', '$gte']);
const ALL_OPS = new Set(['$eq', '$ne', ...RANGE_OPS]);

/**
 * The filters projections use on every write, `{_id, field: {$lte: n}}` and the like, decided
 * without compiling a query: top-level fields only, equality with a string, finite number or
 * boolean, `$in` a non-empty list of those, and range comparisons with finite numbers. A document
 * whose field holds anything else (missing, null, an array, an object, another type) is left to
 * the query engine, which has MongoDB's rules for those. Answers undefined for any other filter.
 */
export function compileSimpleFilter(filter: Filter): SimpleTest | undefined {
  const conditions: [field: string, condition: Condition][] = [];
  for (const field in filter) {
    if (field === '' || field.startsWith('$') || field.includes('.')) return undefined;
    const value = filter[field];
    if (isScalar(value)) {
      conditions.push([field, { op: '$eq', operand: value }]);
      continue;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value) || Object.getPrototypeOf(value) !== Object.prototype) return undefined;
    // `{}` is an equality with an empty document, not "no condition".
    if (Object.keys(value).length === 0) return undefined;
    for (const op in value) {
      const operand = (value as Record<string, unknown>)[op];
      if (op === '$in') {
        if (!Array.isArray(operand) || operand.length === 0 || !operand.every(isScalar)) return undefined;
        conditions.push([field, { op, operand: new Set(operand) }]);
        continue;
      }
      if (!ALL_OPS.has(op) || !isScalar(operand)) return undefined;
      if (RANGE_OPS.has(op) && typeof operand !== 'number') return undefined;
      conditions.push([field, { op: op as Exclude<Condition['op'], '$in'>, operand }]);
    }
  }
  return (doc) => {
    for (const [field, condition] of conditions) {
      const actual = doc[field];
      if (condition.op === '$in') {
        if (!isScalar(actual)) return undefined;
        if (!condition.operand.has(actual)) return false;
        continue;
      }
      if (typeof actual !== typeof condition.operand || (typeof actual === 'number' && !Number.isFinite(actual))) return undefined;
      if (!holds(condition.op, actual as Scalar, condition.operand)) return false;
    }
    return true;
  };
}

/** Decides simple filters directly and compiles a mingo query only when one is needed. */
export function compileMatcher(filter: Filter): (doc: Record<string, unknown>) => boolean {
  const simple = compileSimpleFilter(filter);
  // A filter the simple test does not take is compiled at once, so a malformed one throws even
  // when nothing matches it.
  let query = simple ? undefined : new Query(filter);
  return (doc) => {
    const verdict = simple?.(doc);
    if (verdict !== undefined) return verdict;
    query ??= new Query(filter);
    return query.test(doc);
  };
}

function holds(op: Exclude<Condition['op'], '$in'>, a: Scalar, b: Scalar): boolean {
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
