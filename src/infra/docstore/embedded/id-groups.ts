import type { Database } from 'lmdb';
import { KeyBuilder, successor } from './key-codec.js';

/**
 * A grouped index's storage (IndexSpec.grouped, and every text index): one LMDB entry per run of
 * _ids sharing the index values (a chat's messages, the messages holding a word), where a plain
 * index has one entry per document each spelling out the values and the _id. The key is the
 * group's values then the run's first _id; the value lists the run's _ids in byte order, each as
 * the count of leading bytes it shares with the one before and the bytes that differ (front
 * coding: ids of one instance and time differ in their last few characters). A word in every
 * tenth message cost 150 bytes per message as entries; it costs a few bytes here.
 *
 * Invariant: a run's key id is at most its first id, and every id of a run orders before the key
 * id of the next run of the group; an id therefore belongs to the last run whose key is <= it.
 */

/** Runs are split past this many bytes: small enough to stay on a page, big enough to share it. */
const RUN_BYTES = 1024;

export type GroupDb = Database<Buffer, Buffer>;

/**
 * The encoded ids of a run. `base`: the run's key id, which the first id is coded against (it is
 * mostly that id: a run of one costs two bytes beside its key).
 */
export function encodeRun(ids: readonly Buffer[], base?: Buffer): Buffer {
  let size = 0;
  for (const id of ids) size += id.length + 4;
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  let prev: Buffer | undefined = base;
  for (const id of ids) {
    let shared = 0;
    if (prev) while (shared < prev.length && shared < id.length && prev[shared] === id[shared]) shared++;
    at = writeVarint(out, at, shared);
    at = writeVarint(out, at, id.length - shared);
    at += id.copy(out, at, shared);
    prev = id;
  }
  return out.subarray(0, at);
}

export function decodeRun(bytes: Uint8Array, base?: Buffer): Buffer[] {
  const ids: Buffer[] = [];
  let at = 0;
  let prev: Buffer | undefined = base;
  while (at < bytes.length) {
    let shared: number;
    let rest: number;
    [shared, at] = readVarint(bytes, at);
    [rest, at] = readVarint(bytes, at);
    const id = Buffer.allocUnsafe(shared + rest);
    if (prev && shared > 0) prev.copy(id, 0, 0, shared);
    id.set(bytes.subarray(at, at + rest), shared);
    at += rest;
    ids.push(id);
    prev = id;
  }
  return ids;
}

function writeVarint(out: Buffer, at: number, n: number): number {
  while (n >= 0x80) {
    out[at++] = (n & 0x7f) | 0x80;
    n >>>= 7;
  }
  out[at++] = n;
  return at;
}

function readVarint(bytes: Uint8Array, start: number): [number, number] {
  let n = 0;
  let shift = 0;
  let at = start;
  for (;;) {
    const b = bytes[at++] as number;
    n |= (b & 0x7f) << shift;
    if (b < 0x80) return [n >>> 0, at];
    shift += 7;
  }
}

const runKey = (group: Buffer, id: Buffer) => Buffer.concat([group, id]);

/** The ids of every run of a group, in byte order (or reverse), below `high` / from `low` when given. */
export function* scanGroup(db: GroupDb, group: Buffer, reverse: boolean, low?: Buffer, high?: Buffer): Generator<Buffer> {
  const end = successor(group);
  // Backwards from the run holding `high` (the last run whose key is <= it), the way a page goes back.
  const options = !reverse
    ? { start: group, end }
    : high
      ? { start: runKey(group, high), end: group, reverse: true }
      : { start: end, end: group, reverse: true, exclusiveStart: true };
  for (const { key, value } of db.getRange(options)) {
    const ids = decodeRun(value, key.subarray(group.length));
    if (reverse) ids.reverse();
    for (const id of ids) {
      if (high && Buffer.compare(id, high) > 0) continue;
      if (low && Buffer.compare(id, low) < 0) {
        if (reverse) return;
        continue;
      }
      yield id;
    }
  }
}

/** The run an id belongs to: the last whose key is <= group + id, else the group's first run. */
function runOf(db: GroupDb, group: Buffer, id: Buffer): { key: Buffer; ids: Buffer[] } | undefined {
  for (const { key, value } of db.getRange({ start: runKey(group, id), end: group, reverse: true, limit: 1 })) {
    if (key.length >= group.length && key.subarray(0, group.length).equals(group)) return { key, ids: decodeRun(value, key.subarray(group.length)) };
  }
  for (const { key, value } of db.getRange({ start: group, end: successor(group), limit: 1 })) return { key, ids: decodeRun(value, key.subarray(group.length)) };
  return undefined;
}

/** The key id of the run after `key` in the group, if any. */
function nextRunId(db: GroupDb, group: Buffer, key: Buffer): Buffer | undefined {
  for (const { key: next } of db.getRange({ start: key, end: successor(group), exclusiveStart: true, limit: 1 })) {
    return next.subarray(group.length);
  }
  return undefined;
}

/** Adds ids (sorted by bytes, distinct) to a group, inside a write transaction. */
export function addToGroup(db: GroupDb, group: Buffer, ids: readonly Buffer[]): void {
  if (ids.length === 0 || appendToLastRun(db, group, ids)) return;
  let i = 0;
  while (i < ids.length) {
    const run = runOf(db, group, ids[i] as Buffer);
    if (!run) {
      writeRuns(db, group, undefined, [...ids.slice(i)]);
      return;
    }
    const next = nextRunId(db, group, run.key);
    let j = i;
    while (j < ids.length && (next === undefined || Buffer.compare(ids[j] as Buffer, next) < 0)) j++;
    writeRuns(db, group, run.key, mergeSorted(run.ids, ids.slice(i, j)));
    i = j;
  }
}

/**
 * The common case: ids past every id of the group (a chat's next message, ids growing with time)
 * that fit in its last run. Their bytes are added to the run's end, coded against its last id,
 * where the general path decodes every id of the run into a Buffer and encodes them all again.
 */
function appendToLastRun(db: GroupDb, group: Buffer, ids: readonly Buffer[]): boolean {
  for (const { key, value } of db.getRange({ start: successor(group), end: group, reverse: true, exclusiveStart: true, limit: 1 })) {
    const last = lastOfRun(value, key.subarray(group.length));
    if (Buffer.compare(ids[0] as Buffer, last) <= 0) return false;
    const tail = encodeRun(ids, last);
    if (value.length + tail.length > RUN_BYTES) return false;
    db.putSync(key, Buffer.concat([value, tail]));
    return true;
  }
  return false;
}

/** The last id of an encoded run, built in one buffer instead of one Buffer per id. */
function lastOfRun(bytes: Uint8Array, base: Buffer): Buffer {
  let id = Buffer.from(base);
  let length = base.length;
  let at = 0;
  while (at < bytes.length) {
    let shared: number;
    let rest: number;
    [shared, at] = readVarint(bytes, at);
    [rest, at] = readVarint(bytes, at);
    if (shared + rest > id.length) {
      const wider = Buffer.allocUnsafe(2 * (shared + rest));
      id.copy(wider, 0, 0, shared);
      id = wider;
    }
    id.set(bytes.subarray(at, at + rest), shared);
    length = shared + rest;
    at += rest;
  }
  return id.subarray(0, length);
}

/** Removes ids from a group, inside a write transaction. */
export function removeFromGroup(db: GroupDb, group: Buffer, ids: readonly Buffer[]): void {
  for (const id of ids) {
    const run = runOf(db, group, id);
    if (!run) continue;
    const kept = run.ids.filter((other) => !other.equals(id));
    if (kept.length === run.ids.length) continue;
    // The key may stay below the run's new first id (see the invariant): one put, no move.
    if (kept.length === 0) db.removeSync(run.key);
    else db.putSync(run.key, encodeRun(kept, run.key.subarray(group.length)));
  }
}

/** Replaces the run under `oldKey` (none: a new group) with `ids`, split into runs of RUN_BYTES. */
function writeRuns(db: GroupDb, group: Buffer, oldKey: Buffer | undefined, ids: Buffer[]): void {
  const runs: Buffer[][] = [];
  let current: Buffer[] = [];
  let size = 0;
  for (const id of ids) {
    const prev = current[current.length - 1];
    // The bytes it takes front-coded after the one before (two varints of one byte, mostly).
    const cost = 2 + id.length - (prev ? sharedBytes(prev, id) : 0);
    if (size + cost > RUN_BYTES && prev) {
      runs.push(current);
      current = [];
      size = 0;
    }
    current.push(id);
    size += cost;
  }
  if (current.length > 0) runs.push(current);
  runs.forEach((run, n) => {
    // The first run keeps its key when that is still <= its first id; the others go under their first id.
    const first = run[0] as Buffer;
    const key = n === 0 && oldKey && Buffer.compare(oldKey.subarray(group.length), first) <= 0 ? oldKey : runKey(group, first);
    if (n === 0 && oldKey && key !== oldKey) db.removeSync(oldKey);
    db.putSync(key, encodeRun(run, key.subarray(group.length)));
  });
}

function sharedBytes(a: Buffer, b: Buffer): number {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
}

function mergeSorted(a: readonly Buffer[], b: readonly Buffer[]): Buffer[] {
  const out: Buffer[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (j >= b.length) out.push(a[i++] as Buffer);
    else if (i >= a.length) out.push(b[j++] as Buffer);
    else {
      const c = Buffer.compare(a[i] as Buffer, b[j] as Buffer);
      if (c < 0) out.push(a[i++] as Buffer);
      else if (c > 0) out.push(b[j++] as Buffer);
      else {
        out.push(a[i++] as Buffer);
        j++;
      }
    }
  }
  return out;
}

/** The group key of these values: the index's prefix and the values, as a plain entry starts. */
export function groupKey(prefix: Buffer, values: readonly unknown[], directions: readonly (1 | -1)[]): Buffer {
  const builder = new KeyBuilder(prefix);
  values.forEach((v, i) => builder.value(v, directions[i] ?? 1));
  return builder.build();
}
