import type { Database, Key } from 'lmdb';

/** The part of lmdb's msgpackr encoder this touches: the shapes it holds in memory. */
interface ShapeHolder {
  structures?: unknown[] & { uninitialized?: boolean; sharedLength?: number };
}

const shapesOf = <V, K extends Key>(db: Database<V, K>): ShapeHolder | undefined => (db as unknown as { encoder?: ShapeHolder }).encoder;

/** How many shapes the encoder holds as saved: a write that fails with the count unchanged saved none. */
export function savedShapes<V, K extends Key>(db: Database<V, K>): number {
  return shapesOf(db)?.structures?.sharedLength ?? 0;
}

/**
 * A database whose values share their shapes (msgpackr records under lmdb's sharedStructuresKey)
 * saves a new shape inside the write transaction that first used it. When that transaction rolls
 * back, the saved shape goes with it while msgpackr keeps it in memory: a later value would be
 * stored under a shape number never saved, or read with the shape another thread has since saved
 * under that number. Call this, inside the transaction that rolled a child back (before anything
 * else encodes), or once a transaction failed: the shapes are read again from what was saved.
 * Given the count of saved shapes from before the write (savedShapes), a write that saved none
 * (a duplicate key, say, which is routine) leaves them loaded: reading them all again and
 * compiling their readers anew is not free.
 */
export function forgetUnsavedShapes<V, K extends Key>(db: Database<V, K>, savedBefore?: number): void {
  const encoder = shapesOf(db);
  if (encoder?.structures === undefined) return;
  if (savedBefore !== undefined && savedShapes(db) <= savedBefore) return;
  // A fresh array, not the old one emptied: msgpackr keeps merging what it loads with the array
  // it holds, so a stale shape left in it would win over the saved one.
  const fresh: unknown[] & { uninitialized?: boolean } = [];
  fresh.uninitialized = true;
  encoder.structures = fresh;
}
