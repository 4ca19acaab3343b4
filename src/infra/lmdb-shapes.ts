import type { Database, Key } from 'lmdb';

/** The part of lmdb's msgpackr encoder this touches: the shapes it holds in memory. */
interface ShapeHolder {
  structures?: unknown[] & { uninitialized?: boolean };
}

/**
 * A database whose values share their shapes (msgpackr records under lmdb's sharedStructuresKey)
 * saves a new shape inside the write transaction that first used it. When that transaction rolls
 * back, the saved shape goes with it while msgpackr keeps it in memory: a later value would be
 * stored under a shape number never saved, or read with the shape another thread has since saved
 * under that number. Call this, inside the transaction that rolled a child back (before anything
 * else encodes), or once a transaction failed: the shapes are read again from what was saved.
 */
export function forgetUnsavedShapes<V, K extends Key>(db: Database<V, K>): void {
  const encoder = (db as unknown as { encoder?: ShapeHolder }).encoder;
  if (encoder?.structures === undefined) return;
  // A fresh array, not the old one emptied: msgpackr keeps merging what it loads with the array
  // it holds, so a stale shape left in it would win over the saved one.
  const fresh: unknown[] & { uninitialized?: boolean } = [];
  fresh.uninitialized = true;
  encoder.structures = fresh;
}
