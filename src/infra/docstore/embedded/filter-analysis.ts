import type { Filter } from '../port.js';
import { isPlainObject } from './paths.js';

/** What the planner can use from a filter: fields pinned to one or a few scalar values. */
export interface FilterShape {
  /** Field path -> the distinct values it must equal (one value: equality; several: $in). */
  fields: Map<string, unknown[]>;
  /** True when those conditions are the whole filter, so an index can answer it without mingo. */
  exact: boolean;
  /**
   * Field path -> the string range a field condition of $gt, $gte, $lt, $lte keeps it to (ASCII
   * bounds only). Never part of `exact`: the range is read, mingo still decides.
   */
  ranges: Map<string, StringRange>;
}

export interface StringRange {
  low?: { value: string; inclusive: boolean };
  high?: { value: string; inclusive: boolean };
}

export function analyzeFilter(filter: Filter): FilterShape {
  const shape: FilterShape = { fields: new Map(), exact: true, ranges: new Map() };
  collect(filter, shape);
  return shape;
}

function collect(filter: Filter, shape: FilterShape): void {
  for (const [key, condition] of Object.entries(filter)) {
    if (key === '$and' && Array.isArray(condition)) {
      for (const clause of condition) {
        if (isPlainObject(clause)) collect(clause, shape);
        else shape.exact = false;
      }
      continue;
    }
    const values = key.startsWith('$') ? undefined : pinnedValues(condition, shape);
    if (values === undefined || shape.fields.has(key)) {
      const range = key.startsWith('$') || shape.ranges.has(key) ? undefined : stringRange(condition);
      if (range) shape.ranges.set(key, range);
      shape.exact = false;
      continue;
    }
    shape.fields.set(key, values);
  }
}

/** The values a field condition pins the field to, or undefined when it does not pin it. */
function pinnedValues(condition: unknown, shape: FilterShape): unknown[] | undefined {
  if (isPlannable(condition)) return [condition];
  if (!isPlainObject(condition)) return undefined;
  const operators = Object.keys(condition);
  if (operators.length === 0 || !operators.every((op) => op.startsWith('$'))) return undefined;
  if (operators.length > 1) shape.exact = false;
  if ('$eq' in condition) return isPlannable(condition.$eq) ? [condition.$eq] : undefined;
  const list = condition.$in;
  if (Array.isArray(list) && list.length > 0 && list.every(isPlannable)) return [...new Set(list)];
  return undefined;
}

const ASCII = /^[\x01-\x7f]*$/;

/**
 * The range of a condition made only of $gt, $gte, $lt and $lte on ASCII strings, else undefined.
 * Against an ASCII bound every string orders the same by its UTF-8 bytes (the index keys) as by
 * UTF-16 code units (mingo's order), and both compare strings with strings only, as MongoDB does.
 */
function stringRange(condition: unknown): StringRange | undefined {
  if (!isPlainObject(condition)) return undefined;
  const range: StringRange = {};
  const entries = Object.entries(condition);
  if (entries.length === 0) return undefined;
  for (const [op, operand] of entries) {
    if (typeof operand !== 'string' || !ASCII.test(operand)) return undefined;
    if ((op === '$gt' || op === '$gte') && !range.low) range.low = { value: operand, inclusive: op === '$gte' };
    else if ((op === '$lt' || op === '$lte') && !range.high) range.high = { value: operand, inclusive: op === '$lte' };
    else return undefined;
  }
  return range;
}

/**
 * Scalars whose equality means exactly "index key equals this value" (null also matches missing,
 * which the index stores as null). Objects, arrays, regexes, dates and NaN are left to mingo.
 */
function isPlannable(value: unknown): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return !Number.isNaN(value);
    default:
      return value === null;
  }
}
