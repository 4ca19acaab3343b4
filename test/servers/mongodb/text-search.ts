import type { Filter } from '../../../src/infra/docstore/port.js';
import { CommandError } from './errors.js';

type Doc = Record<string, unknown>;

/** A text index as mongod keeps it: equality prefix fields, then the text fields. */
export interface TextIndex {
  prefix: string[];
  fields: string[];
}

/**
 * mongod's `$text` over a text index (language none: no stemming, no stop words), written from
 * MongoDB's manual rather than from the embedded store's rewrite, so the two can disagree: terms
 * are cut at anything not a letter or digit, compared case- and diacritic-insensitively; a search
 * with quoted phrases matches documents holding every phrase (case-insensitive substring of an
 * indexed string), otherwise any term; `-term` excludes.
 */
export function textMatcher(filter: Filter, index: TextIndex | undefined): ((doc: Doc) => boolean) | undefined {
  if (!('$text' in filter)) return undefined;
  if (!index) throw new CommandError(27, 'IndexNotFound', 'text index required for $text query');
  for (const field of index.prefix) {
    const condition = filter[field];
    if (condition === undefined || (typeof condition === 'object' && condition !== null && !('$eq' in condition))) {
      throw new CommandError(2, 'BadValue', 'error processing query: planner returned error :: caused by :: failed to use text index to satisfy $text query (if text index is compound, are equality predicates given for all prefix fields?)');
    }
  }
  const search = String((filter.$text as Doc).$search ?? '');
  const phrases = [...search.matchAll(/"([^"]*)"/g)].map((m) => fold(m[1] ?? '')).filter(Boolean);
  const rest = search.replace(/"[^"]*"/g, ' ').split(/\s+/).filter(Boolean);
  const negated = rest.filter((t) => t.startsWith('-')).flatMap((t) => terms(t.slice(1)));
  const positive = [...rest.filter((t) => !t.startsWith('-')).flatMap(terms), ...phrases.flatMap(terms)];
  return (doc) => {
    const strings = index.fields.flatMap((f) => stringsAt(doc, f));
    const words = new Set(strings.flatMap(terms));
    if (!positive.some((t) => words.has(t)) || negated.some((t) => words.has(t))) return false;
    return phrases.every((p) => strings.some((s) => fold(s).includes(p)));
  };
}

const fold = (s: string) => s.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
const terms = (s: string) => fold(s).split(/[^\p{L}\p{N}]+/u).filter(Boolean);

function stringsAt(doc: Doc, field: string): string[] {
  const value = field.split('.').reduce<unknown>((node, part) => (node !== null && typeof node === 'object' ? (node as Doc)[part] : undefined), doc);
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

export function withoutText(filter: Filter): Filter {
  const { $text: _text, ...rest } = filter;
  return rest;
}
