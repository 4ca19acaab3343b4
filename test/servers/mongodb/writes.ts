import { ObjectId } from 'bson';
import { update as applyModifier } from 'mingo';
import type { Modifier } from 'mingo/updater';
import { deepCopy } from '../../../src/infra/docstore/embedded/deep-copy.js';
import { isPlainObject } from '../../../src/infra/docstore/embedded/paths.js';
import { applyUpdate, assertReplacement, assertUpdate, upsertDocument } from '../../../src/infra/docstore/embedded/update-apply.js';
import { compareValues } from '../../../src/infra/docstore/embedded/value-order.js';
import type { Document, Filter, SortSpec, Update } from '../../../src/infra/docstore/port.js';
import { CommandError } from './errors.js';
import type { Doc, MemoryCollection } from './memory-collection.js';

/** One statement of an `update` command (also what findAndModify does with `update`). */
export interface UpdateStatement {
  q: Filter;
  /** Operators, or a replacement document. */
  u: unknown;
  upsert?: boolean;
  multi?: boolean;
  sort?: SortSpec;
  arrayFilters?: Filter[];
}

export interface UpdateOutcome {
  matched: number;
  modified: number;
  upsertedId?: unknown;
  /** The first matched document before and after, for findAndModify. */
  before?: Doc;
  after?: Doc;
}

export function runUpdate(coll: MemoryCollection, s: UpdateStatement): UpdateOutcome {
  if (!isPlainObject(s.u)) throw new CommandError(9, 'FailedToParse', 'pipeline updates are not supported by this test server');
  const u = s.u;
  const replacement = !Object.keys(u).some((k) => k.startsWith('$'));
  if (replacement) assertReplacement(u as Document);
  else assertUpdate(u as Update);
  if (s.multi && replacement) throw new CommandError(9, 'FailedToParse', 'multi update is not supported for replacement-style update');

  const matches = coll.find({ filter: s.q, ...(s.sort ? { sort: s.sort } : {}), limit: s.multi ? 0 : 1 });
  if (matches.length > 0) {
    const outcome: UpdateOutcome = { matched: matches.length, modified: 0 };
    for (const current of matches) {
      const next = replacement ? replaced(current, u) : updated(current, u as Update, s.arrayFilters);
      outcome.before ??= current;
      outcome.after ??= next ?? current;
      if (!next) continue;
      coll.replace(current, next);
      outcome.modified++;
    }
    return outcome;
  }
  if (!s.upsert) return { matched: 0, modified: 0 };
  const doc = replacement ? replacementUpsert(s.q, u) : upserted(s.q, u as Update);
  const stored = coll.insert(doc);
  return { matched: 0, modified: 0, upsertedId: stored._id, after: stored };
}

/** The new document, or undefined when the update changes nothing. */
function updated(current: Doc, update: Update, arrayFilters: Filter[] | undefined): Doc | undefined {
  // $setOnInsert alone leaves a matched document as it is.
  if (Object.keys(update).every((op) => op === '$setOnInsert')) return undefined;
  if (arrayFilters && arrayFilters.length > 0) {
    const { $setOnInsert: _ignored, ...operators } = update;
    const next = deepCopy(current);
    applyModifier(next, operators as Modifier<Doc>, arrayFilters);
    if (next._id !== current._id) throw new CommandError(66, 'ImmutableField', "Performing an update on the path '_id' would modify the immutable field '_id'");
    return compareValues(current, next) === 0 ? undefined : next;
  }
  const { doc, changed } = applyUpdate(current as Document, update);
  return changed ? doc : undefined;
}

function replaced(current: Doc, replacement: Doc): Doc | undefined {
  if (replacement._id !== undefined && compareValues(replacement._id, current._id) !== 0) {
    throw new CommandError(66, 'ImmutableField', "After applying the update, the (immutable) field '_id' was found to have been altered");
  }
  const { _id: _dropped, ...fields } = replacement;
  const next = { _id: current._id, ...fields };
  return compareValues(current, next) === 0 ? undefined : next;
}

function replacementUpsert(filter: Filter, replacement: Doc): Doc {
  const { _id, ...fields } = replacement;
  return { _id: _id ?? filterId(filter) ?? new ObjectId(), ...fields };
}

/**
 * mongod builds an upserted document from the filter's equalities and the update; without an _id
 * from either it invents an ObjectId (not a string: an adapter that needs string ids must say so).
 */
function upserted(filter: Filter, update: Update): Doc {
  if (filterId(filter) !== undefined || updateId(update) !== undefined) return upsertDocument(filter, update);
  const placeholder = new ObjectId();
  const doc: Doc = upsertDocument(filter, { ...update, $setOnInsert: { ...update.$setOnInsert, _id: placeholder.toHexString() } });
  doc._id = placeholder;
  return doc;
}

function filterId(filter: Filter): unknown {
  const id = equality(filter._id);
  if (id !== undefined) return id;
  const clauses = filter.$and;
  if (Array.isArray(clauses)) {
    for (const clause of clauses) {
      const found = isPlainObject(clause) ? filterId(clause) : undefined;
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

function equality(condition: unknown): unknown {
  if (condition === undefined || condition instanceof RegExp) return undefined;
  if (!isPlainObject(condition)) return condition;
  if ('$eq' in condition) return condition.$eq;
  const list = condition.$in;
  return Array.isArray(list) && list.length === 1 ? list[0] : undefined;
}

function updateId(update: Update): unknown {
  return update.$set?._id ?? update.$setOnInsert?._id;
}
