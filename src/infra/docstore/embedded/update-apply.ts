import { randomBytes } from 'node:crypto';
import type { Modifier } from 'mingo/updater';
import type { Document, Filter, Update } from '../port.js';
import { isPlainObject } from './paths.js';
import { compareValues } from './value-order.js';
import { deepCopy } from './deep-copy.js';
import { mingo } from './mingo.js';

/** MongoDB refuses replacement documents where operators are expected, and the reverse. */
export function assertUpdate(update: Update): void {
  const operators = Object.keys(update);
  if (operators.length === 0) throw new TypeError('update document must contain update operators');
  const paths = new Set<string>();
  for (const op of operators) {
    if (!op.startsWith('$')) throw new TypeError(`update document requires operators, found field ${op}`);
    if (!isPlainObject(update[op])) throw new TypeError(`update operator ${op} takes an object`);
    for (const path of Object.keys(update[op] as object)) {
      if (paths.has(path)) throw new TypeError(`Updating the path '${path}' would create a conflict at '${path}'`);
      paths.add(path);
    }
  }
}

export function assertReplacement(doc: Document): void {
  for (const field of Object.keys(doc)) {
    if (field.startsWith('$')) throw new TypeError(`replacement document cannot contain operator ${field}`);
  }
}

/**
 * Applies update operators to a copy of an existing document. Returns the new document and whether
 * it differs (MongoDB's modifiedCount counts only real changes).
 */
export function applyUpdate(doc: Document, update: Update): { doc: Document; changed: boolean } {
  const { operators, id } = extractId(update, false);
  if (id !== undefined && id !== doc._id) throw immutableId();
  const simple = applySimple(doc, operators);
  if (simple) return simple;
  const next = applyOperators(doc, operators, false) as Document;
  if (next._id !== doc._id) throw immutableId();
  return { doc: next, changed: compareValues(doc, next) !== 0 };
}

/**
 * The updates projections write all day: $set, $unset, numeric $inc and numeric $max of top-level
 * fields (the messages model raises a status rank with $max on every receipt and upsert).
 * Applied here directly, they cost a fraction of mingo's, which assembles its whole operator
 * table on every call. Anything else answers undefined and goes through mingo, so both paths
 * behave alike: dotted paths, other operators, `_id`, an undefined value, $inc involving a
 * non-number (mingo leaves those alone).
 */
function applySimple(doc: Document, update: Update): { doc: Document; changed: boolean } | undefined {
  if (!isSimpleUpdate(doc, update)) return undefined;
  const next: Document = { ...doc };
  return { doc: next, changed: applySimpleTo(next, update) };
}

/**
 * applySimple's update made on the document itself, for a caller that owns it (the rebuild's
 * in-memory fold, which would otherwise copy a chat per message). Answers false, having touched
 * nothing, for an update applySimple would leave to mingo.
 */
export function applySimpleInPlace(doc: Document, update: Update): boolean {
  if (!isSimpleUpdate(doc, update)) return false;
  applySimpleTo(doc, update);
  return true;
}

/** The order applySimple applies its operators in. */
const SIMPLE_ORDER = ['$set', '$unset', '$inc', '$max'];

/**
 * `upserting`: the update of an upsert built by upsertSimple, which checks $setOnInsert itself.
 * Its operators must also come in applySimple's order ($set, $unset, $inc, $max), as mingo applies them
 * in the update's, and no field may name an Object.prototype member (mingo reads an inherited
 * member, toString say, as the field's value: its path decides those).
 */
function isSimpleUpdate(doc: Record<string, unknown>, update: Update, upserting = false): boolean {
  let rank = -1;
  for (const op in update) {
    if (upserting && op === '$setOnInsert') continue;
    if (op !== '$set' && op !== '$unset' && op !== '$inc' && op !== '$max' && op !== '$setOnInsert') return false;
    if (upserting) {
      const next = SIMPLE_ORDER.indexOf(op);
      if (next <= rank) return false;
      rank = next;
    }
    const fields = update[op] as Record<string, unknown>;
    for (const field in fields) {
      if (op === '$inc' && !upserting && field.includes('.')) {
        if (!isSimpleNestedInc(doc, field, fields[field])) return false;
        continue;
      }
      if (field === '' || field === '_id' || field.includes('.') || field.startsWith('$')) return false;
      if (upserting && field in Object.prototype) return false;
      if (op === '$set' && fields[field] === undefined) return false;
      if (op === '$inc' && (typeof fields[field] !== 'number' || (Object.hasOwn(doc, field) && typeof doc[field] !== 'number'))) return false;
      // Numbers against numbers only: mingo orders other types by BSON rank, left to it.
      if (op === '$max' && (field in Object.prototype || !isNumber(fields[field]) || (Object.hasOwn(doc, field) && !isNumber(doc[field])))) return false;
    }
  }
  return true;
}

/**
 * A counter one level down (the stats histogram's `latency.<bucket>`): `a.b` where `a` is missing
 * or a plain object whose `b` is missing or a number. Through mingo it cost the stats projection
 * about 1 ms a message; mingo makes the same document (`a` created as an object, `b` added to).
 * Arrays (mingo reads `b` as an index), numeric-looking members of a missing `a` (mingo still
 * makes an object, but keep the doubt out) and Object.prototype names stay with mingo.
 */
function isSimpleNestedInc(doc: Record<string, unknown>, field: string, by: unknown): boolean {
  if (typeof by !== 'number') return false;
  const dot = field.indexOf('.');
  const outer = field.slice(0, dot);
  const inner = field.slice(dot + 1);
  if (outer === '' || inner === '' || inner.includes('.') || outer === '_id' || outer.startsWith('$') || inner.startsWith('$')) return false;
  if (outer in Object.prototype || inner in Object.prototype) return false;
  if (!Object.hasOwn(doc, outer)) return true;
  const value = doc[outer];
  if (!isPlainObject(value)) return false;
  return !Object.hasOwn(value, inner) || typeof (value as Record<string, unknown>)[inner] === 'number';
}

/** `next[outer][inner] += by` on a copy of `next[outer]` (the stored document's object is shared). */
function incNested(next: Document, field: string, by: number): boolean {
  const dot = field.indexOf('.');
  const outer = field.slice(0, dot);
  const inner = field.slice(dot + 1);
  const current = next[outer] as Record<string, unknown> | undefined;
  const copy: Record<string, unknown> = current === undefined ? {} : { ...current };
  next[outer] = copy;
  if (!Object.hasOwn(copy, inner)) {
    copy[inner] = by;
    return true;
  }
  if (by === 0) return false;
  copy[inner] = (copy[inner] as number) + by;
  return true;
}

/** Applies a simple update (see isSimpleUpdate) to `next`; answers whether anything changed. */
function applySimpleTo(next: Document, update: Update): boolean {
  let changed = false;
  const set = update.$set as Record<string, unknown> | undefined;
  for (const field in set) {
    const value = set[field];
    if (!Object.hasOwn(next, field) || compareValues(next[field], value) !== 0 || !sameType(next[field], value)) changed = true;
    next[field] = value;
  }
  const unset = update.$unset as Record<string, unknown> | undefined;
  for (const field in unset) {
    if (Object.hasOwn(next, field)) {
      delete next[field];
      changed = true;
    }
  }
  const inc = update.$inc as Record<string, number> | undefined;
  for (const field in inc) {
    const by = inc[field] as number;
    if (field.includes('.')) {
      if (incNested(next, field, by)) changed = true;
    } else if (!Object.hasOwn(next, field)) {
      next[field] = by;
      changed = true;
    } else if (by !== 0) {
      next[field] = (next[field] as number) + by;
      changed = true;
    }
  }
  const max = update.$max as Record<string, number> | undefined;
  for (const field in max) {
    const value = max[field] as number;
    // As mingo: a missing field takes the value, a present one only a greater value.
    if (!Object.hasOwn(next, field) || value > (next[field] as number)) {
      next[field] = value;
      changed = true;
    }
  }
  return changed;
}

/** A number $max can compare with `>` as mingo compares it (NaN orders below every number there). */
function isNumber(value: unknown): value is number {
  return typeof value === 'number' && !Number.isNaN(value);
}

/** compareValues ranks some types together (numbers, say); a change of type is still a change. */
function sameType(a: unknown, b: unknown): boolean {
  if (typeof a !== typeof b) return false;
  if (typeof a !== 'object' || a === null || b === null) return a === null ? b === null : true;
  return Array.isArray(a) === Array.isArray(b) && a instanceof Date === b instanceof Date && a instanceof Uint8Array === b instanceof Uint8Array;
}

/**
 * The document an upsert inserts, built as MongoDB builds it: the filter's equality conditions
 * (top level and inside $and, dotted paths as nested objects), then the update with $setOnInsert.
 * The _id comes from the filter, else from the update ($set or $setOnInsert), else it is new.
 */
export function upsertDocument(filter: Filter, update: Update): Document {
  const simple = upsertSimple(filter, update);
  if (simple) return simple;
  const seed = filterEqualities(filter);
  const { operators, id } = extractId(update, true);
  if (id !== undefined && '_id' in seed && id !== seed._id) throw immutableId();
  const { _id = id ?? newId(), ...rest } = applyOperators(seed, operators, true);
  if (typeof _id !== 'string') throw new TypeError('documents need a string _id');
  return { _id, ...rest };
}

/**
 * The upserts projections write all day (a counter bucket by _id, a chat by instance and jid with
 * its fields on insert): scalar equalities at the top level and an update applySimple takes.
 * Built here as upsertDocument builds them through mingo, fields in the same order, at a fraction
 * of the cost; anything else answers undefined and takes mingo's path.
 */
function upsertSimple(filter: Filter, update: Update): Document | undefined {
  let id: unknown;
  for (const key in filter) {
    const value = filter[key];
    if (key === '' || key.startsWith('$') || key.includes('.') || key in Object.prototype || !isScalar(value)) return undefined;
    if (key === '_id') id = value;
  }
  // The filter's fields stand for the document's in the check: the same names and values.
  if (!isSimpleUpdate(filter, update, true)) return undefined;
  const onInsert = update.$setOnInsert;
  for (const field in onInsert) {
    const value = onInsert[field];
    if (field === '' || field.startsWith('$') || field.includes('.') || field in Object.prototype || value === undefined) return undefined;
    if (field === '_id') {
      if (id !== undefined && value !== id) throw immutableId();
      id = value;
    }
  }
  if (id !== undefined && typeof id !== 'string') throw new TypeError('documents need a string _id');
  const doc = spreadUpsert(filter, update) ?? assignedUpsert(filter, update);
  for (const field in onInsert) {
    const value = onInsert[field];
    if (typeof value === 'object' && value !== null) doc[field] = deepCopy(value);
  }
  doc._id = (id as string | undefined) ?? newId();
  return doc;
}

/**
 * The upsert's document in one literal of spreads, _id first (its value settled last): the
 * filter's fields, then $set, $inc (a missing field is set to the amount), $max and $setOnInsert, each
 * overwriting in place a field an earlier one set, as assignments in that order do. V8 keeps it a
 * fast object, where twenty fields assigned one by one by computed name made it a dictionary,
 * slower to read, encode and collect, and twice as slow to build. Not for an $unset, nor an $inc
 * of a field already set (it adds to it): assignedUpsert builds those.
 */
function spreadUpsert(filter: Filter, update: Update): Document | undefined {
  const { $set: set, $inc: inc, $max: max, $setOnInsert: onInsert } = update;
  if (update.$unset !== undefined) return undefined;
  for (const field in inc) if (Object.hasOwn(filter, field) || (set !== undefined && Object.hasOwn(set, field))) return undefined;
  // A $max of a field the filter sets compares with it: assignedUpsert does that.
  for (const field in max) if (Object.hasOwn(filter, field)) return undefined;
  return { _id: '', ...filter, ...set, ...inc, ...max, ...onInsert };
}

/** The upsert's document assigned field by field: the filter's fields, then the update's operators, then $setOnInsert. */
function assignedUpsert(filter: Filter, update: Update): Document {
  const doc: Document = { _id: '' };
  for (const key in filter) if (key !== '_id') doc[key] = filter[key];
  applySimpleTo(doc, update);
  const onInsert = update.$setOnInsert;
  for (const field in onInsert) if (field !== '_id') doc[field] = onInsert[field];
  return doc;
}

function isScalar(value: unknown): value is string | boolean | number {
  return typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value) && !Object.is(value, -0));
}

/** The _id a replacement upsert inserts under: the replacement's, else the filter's, else a new one. */
export function replacementId(doc: Document, filter: Filter): string {
  if (typeof doc._id === 'string') return doc._id;
  const { _id } = filterEqualities(filter);
  return typeof _id === 'string' ? _id : newId();
}

/** $setOnInsert is MongoDB's, not mingo's: it acts as $set on insert and is ignored otherwise. */
function applyOperators(target: Record<string, unknown>, update: Update, inserting: boolean): Record<string, unknown> {
  const { $setOnInsert, ...operators } = update;
  const next = deepCopy(target);
  if (Object.keys(operators).length > 0) mingo().update(next, operators as Modifier<Record<string, unknown>>);
  if (inserting && $setOnInsert) mingo().update(next, { $set: $setOnInsert } as Modifier<Record<string, unknown>>);
  return next;
}

/**
 * mingo refuses any operator on _id, while MongoDB accepts setting it to its current value, and
 * choosing it on insert. The _id is therefore taken out and checked here.
 */
function extractId(update: Update, inserting: boolean): { operators: Update; id: unknown } {
  let id: unknown;
  const operators: Update = {};
  for (const [op, fields] of Object.entries(update)) {
    if ((op === '$set' || (inserting && op === '$setOnInsert')) && '_id' in fields) {
      const { _id, ...others } = fields;
      id = _id;
      operators[op] = others;
    } else {
      operators[op] = fields;
    }
  }
  return { operators, id };
}

function immutableId(): TypeError {
  return new TypeError("performing an update on the path '_id' would modify the immutable field '_id'");
}

function newId(): string {
  return randomBytes(12).toString('hex');
}

function filterEqualities(filter: Filter): Record<string, unknown> {
  const seed: Record<string, unknown> = {};
  copyEqualities(filter, seed);
  return seed;
}

const NOT_EQUALITY = Symbol('notEquality');

function copyEqualities(filter: Filter, seed: Record<string, unknown>): void {
  for (const [key, condition] of Object.entries(filter)) {
    if (key === '$and' && Array.isArray(condition)) {
      for (const clause of condition) if (isPlainObject(clause)) copyEqualities(clause, seed);
    } else if (!key.startsWith('$')) {
      const value = equalityValue(condition);
      if (value !== NOT_EQUALITY) setPath(seed, key, structuredClone(value));
    }
  }
}

function equalityValue(condition: unknown): unknown {
  if (condition instanceof RegExp) return NOT_EQUALITY;
  if (!isPlainObject(condition)) return condition;
  const operators = Object.keys(condition);
  if (operators.length === 0 || !operators.some((op) => op.startsWith('$'))) return condition;
  if ('$eq' in condition) return condition.$eq;
  const list = condition.$in;
  return Array.isArray(list) && list.length === 1 ? list[0] : NOT_EQUALITY;
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  const last = parts.pop() as string;
  let node = target;
  for (const part of parts) {
    const child = node[part];
    if (isPlainObject(child)) {
      node = child;
    } else {
      const created: Record<string, unknown> = {};
      node[part] = created;
      node = created;
    }
  }
  node[last] = value;
}
