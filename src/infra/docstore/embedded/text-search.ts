import type { Filter } from '../port.js';
import { isPlainObject } from './paths.js';
import type { IndexDef } from './index-keys.js';

/**
 * MongoDB's `{$text: {$search}}` over a text index, as a condition on the index's words field:
 * quoted words must all be there (`"a" "b"`), bare words any of them (`a b`). Words are compared
 * as stored: the writer lower-cased and stripped them, as MongoDB's text index (language none)
 * compares them, so both stores give the same answers. A phrase of several words or a negation
 * is not supported here (nor used): refused rather than answered differently.
 */
export function withTextSearch(filter: Filter, indexes: readonly IndexDef[]): Filter {
  if (!('$text' in filter)) return filter;
  const { $text: text, ...rest } = filter;
  const search = isPlainObject(text) ? text.$search : undefined;
  if (typeof search !== 'string') throw new TypeError('$text needs {$search: string}');
  const def = indexes.find((index) => index.text !== undefined);
  const field = def?.text;
  if (field === undefined) throw new TypeError('$text needs a text index');
  const quoted = [...search.matchAll(/"([^"]*)"/g)].map((m) => (m[1] ?? '').trim());
  const bare = search.replace(/"[^"]*"/g, ' ').split(/\s+/).filter(Boolean);
  if (quoted.some((w) => /\s/.test(w)) || bare.some((w) => w.startsWith('-'))) throw new TypeError('$text: phrases of several words and negations are not supported');
  if (quoted.length > 0 && bare.length > 0) throw new TypeError('$text: either quoted words or bare words, not both');
  const words = [...new Set(quoted.length > 0 ? quoted.filter(Boolean) : bare)];
  if (words.length === 0) return { ...rest, [field]: { $in: [] } };
  if (quoted.length === 0) return { ...rest, [field]: { $in: words } };
  // A grouped text index intersects the words' runs of _ids (query-planner's groups plan).
  if (def?.grouped) return { ...rest, [field]: words.length === 1 ? words[0] : { $all: words } };
  // The first word pins the index (with the equality keys before it); the others are checked on the documents.
  const [first, ...others] = words;
  return { ...rest, [field]: first, ...(others.length > 0 ? { $and: [...others.map((w) => ({ [field]: w })), ...andOf(rest)] } : {}) };
}

const andOf = (filter: Filter): Filter[] => (Array.isArray(filter.$and) ? (filter.$and as Filter[]) : []);
