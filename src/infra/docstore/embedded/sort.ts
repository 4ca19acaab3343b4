import type { Document, SortSpec } from '../port.js';
import { pathValues } from './paths.js';
import { compareValues } from './value-order.js';

/**
 * Sorts with MongoDB semantics: missing fields sort as null, and an array field sorts by its
 * smallest element ascending and its largest descending. Keys are computed once per document.
 */
export function sortDocuments<T extends Document>(docs: T[], spec: SortSpec): T[] {
  const fields = Object.entries(spec);
  if (fields.length === 0) return docs;
  const keyed = docs.map((doc) => ({ doc, keys: fields.map(([path, dir]) => sortKey(doc, path, dir)) }));
  keyed.sort((a, b) => {
    for (let i = 0; i < fields.length; i++) {
      const c = compareValues(a.keys[i], b.keys[i]);
      if (c !== 0) return c * (fields[i] as [string, 1 | -1])[1];
    }
    return 0;
  });
  return keyed.map((k) => k.doc);
}

function sortKey(doc: Document, path: string, dir: 1 | -1): unknown {
  const [first, ...rest] = pathValues(doc, path).values;
  let best = first;
  for (const v of rest) {
    const c = compareValues(v, best);
    if (dir === 1 ? c < 0 : c > 0) best = v;
  }
  return best;
}
