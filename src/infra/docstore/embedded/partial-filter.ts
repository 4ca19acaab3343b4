import type { Document, Filter } from '../port.js';
import { isPlainObject } from './paths.js';
import { compileMatcher } from './simple-filter.js';

/**
 * MongoDB's partial indexes: only documents matching `partialFilterExpression` have entries, so
 * a write that keeps a document outside the filter touches no entry of that index. The operators
 * are MongoDB's for partial filters: equality, $eq, $exists: true, $gt, $gte, $lt, $lte, $type
 * and $in, one condition per top-level field (several fields are an implicit $and).
 */
export interface PartialFilter {
  readonly expression: Filter;
  /** Whether the document belongs in the index. */
  holds(doc: Document): boolean;
  /**
   * Whether every document a query can match belongs in the index, given the values the query
   * pins its fields to. As in MongoDB, a query that does not imply the filter cannot use the index.
   */
  impliedBy(pinned: ReadonlyMap<string, unknown[]>): boolean;
  /** Whether membership alone decides the query's condition on `path` (it pins exactly the filter's values). */
  decides(path: string, values: readonly unknown[]): boolean;
}

const OPERATORS = new Set(['$eq', '$exists', '$gt', '$gte', '$lt', '$lte', '$type', '$in']);

type FieldTest = (value: unknown) => boolean | undefined;

export function compilePartialFilter(expression: Filter): PartialFilter {
  if (!isPlainObject(expression) || Object.keys(expression).length === 0) throw unsupported(expression);
  const fields = Object.entries(expression).map(([path, condition]) => {
    if (path === '' || path.startsWith('$') || path.includes('\0')) throw unsupported(expression);
    checkCondition(condition, expression);
    return {
      path,
      topLevel: !path.includes('.'),
      test: lazyMatcher({ [path]: condition }),
      fast: fastTest(condition),
      equality: equalityValues(condition),
    };
  });
  const whole = lazyMatcher(expression);

  return {
    expression,
    holds(doc) {
      for (const { path, topLevel, fast } of fields) {
        if (!topLevel) return whole(doc);
        const value = doc[path];
        // LMDB keeps a field set to undefined as null: membership is decided on what is stored.
        if (value === undefined && Object.hasOwn(doc, path)) return whole({ ...doc, [path]: null });
        // NaN equals NaN to MongoDB, not to ===: left to the query engine like any non-scalar.
        const verdict = !isScalar(value) || Number.isNaN(value) ? undefined : fast(value);
        if (verdict === undefined) return whole(doc);
        if (!verdict) return false;
      }
      return true;
    },
    impliedBy(pinned) {
      return fields.every(({ path, test }) => {
        const values = pinned.get(path);
        if (values === undefined) return false;
        // A null equality also matches documents without the field: those must belong too.
        return values.every((v) => test(nested(path, v)) && (v !== null || test({})));
      });
    },
    decides(path, values) {
      const exact = fields.find((f) => f.path === path)?.equality;
      return exact !== undefined && exact.length === values.length && values.every((v) => exact.includes(v));
    },
  };
}

/**
 * A matcher compiled on its first use. checkCondition has already refused what MongoDB refuses,
 * and the common documents are decided by fastTest: a store opening its catalog (a rebuild's
 * thread, say) need not load the query engine for indexes it may never ask it about.
 */
function lazyMatcher(filter: Filter): (doc: Record<string, unknown>) => boolean {
  let compiled: ((doc: Record<string, unknown>) => boolean) | undefined;
  return (doc) => (compiled ??= compileMatcher(filter))(doc);
}

function checkCondition(condition: unknown, expression: Filter): void {
  if (isScalar(condition) && condition !== null && condition !== undefined) return;
  if (!isPlainObject(condition) || Object.keys(condition).length === 0) throw unsupported(expression);
  for (const [op, operand] of Object.entries(condition)) {
    if (!OPERATORS.has(op)) throw unsupported(expression);
    if (op === '$exists' && operand !== true) throw unsupported(expression);
    if (op === '$type' && typeof operand !== 'string' && typeof operand !== 'number') throw unsupported(expression);
    if (op === '$in' && (!Array.isArray(operand) || operand.length === 0 || !operand.every((v) => isScalar(v) && v !== null))) throw unsupported(expression);
    if (['$eq', '$gt', '$gte', '$lt', '$lte'].includes(op) && (!isScalar(operand) || operand === null)) throw unsupported(expression);
  }
}

/**
 * The common cases decided without the query engine: a field holding a string, number, boolean,
 * null or nothing, against equality, $in, $exists and $type "string". Undefined: ask mingo.
 */
function fastTest(condition: unknown): FieldTest {
  if (!isPlainObject(condition)) return (v) => v === condition;
  const ops = Object.entries(condition);
  if (ops.length !== 1) return () => undefined;
  const [op, operand] = ops[0] as [string, unknown];
  switch (op) {
    case '$eq':
      return (v) => v === operand;
    case '$in': {
      const set = new Set(operand as unknown[]);
      return (v) => set.has(v);
    }
    case '$exists':
      return (v) => v !== undefined;
    case '$type':
      return operand === 'string' ? (v) => typeof v === 'string' : () => undefined;
    default:
      return () => undefined;
  }
}

/** The values a condition is exactly an equality with, or undefined when it is anything else. */
function equalityValues(condition: unknown): unknown[] | undefined {
  if (!isPlainObject(condition)) return [condition];
  const ops = Object.keys(condition);
  if (ops.length !== 1) return undefined;
  if ('$eq' in condition) return [condition.$eq];
  if ('$in' in condition) return condition.$in as unknown[];
  return undefined;
}

function nested(path: string, value: unknown): Record<string, unknown> {
  const parts = path.split('.');
  let out: unknown = value;
  for (let i = parts.length - 1; i >= 0; i--) out = { [parts[i] as string]: out };
  return out as Record<string, unknown>;
}

function isScalar(value: unknown): value is string | number | boolean | null | undefined {
  return value === null || value === undefined || typeof value === 'string' || typeof value === 'boolean' || typeof value === 'number';
}

function unsupported(expression: unknown): TypeError {
  let shown: string;
  try {
    shown = JSON.stringify(expression);
  } catch {
    shown = String(expression);
  }
  return new TypeError(`unsupported expression in partial index: ${shown}`);
}
