import { EMPTY_ARRAY } from './value-order.js';

export interface PathValues {
  /** Every value the path reaches; null stands for a missing branch. */
  values: unknown[];
  /** True when an array was crossed or expanded (the index becomes multikey). */
  throughArray: boolean;
}

/**
 * The values a dotted path reaches, expanding arrays as MongoDB's multikey indexes and sorts do.
 * A branch that ends early yields null, so index entries stay a superset of what a null equality
 * can match; mingo then decides the exact result.
 */
export function pathValues(doc: unknown, path: string): PathValues {
  const parts = path.split('.');
  const result: PathValues = { values: [], throughArray: false };
  visit(doc, parts, 0, result);
  return result;
}

function visit(value: unknown, parts: string[], i: number, out: PathValues): void {
  if (i === parts.length) {
    if (!Array.isArray(value)) {
      out.values.push(value ?? null);
      return;
    }
    out.throughArray = true;
    if (value.length === 0) out.values.push(EMPTY_ARRAY);
    else out.values.push(...value);
    return;
  }
  const part = parts[i] as string;
  if (Array.isArray(value)) {
    out.throughArray = true;
    if (/^\d+$/.test(part) && Number(part) < value.length) visit(value[Number(part)], parts, i + 1, out);
    if (value.length === 0) out.values.push(null);
    for (const element of value) {
      if (isPlainObject(element)) visit(element[part], parts, i + 1, out);
      else out.values.push(null);
    }
    return;
  }
  if (isPlainObject(value)) visit(value[part], parts, i + 1, out);
  else out.values.push(null);
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    !(value instanceof Date) &&
    !(value instanceof RegExp) &&
    !(value instanceof Uint8Array)
  );
}
