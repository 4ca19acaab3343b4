import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open, type RootDatabase } from 'lmdb';
import { forgetUnsavedShapes, savedShapes } from '../../src/infra/lmdb-shapes.js';

/** The shapes msgpackr holds in memory for a database (what forgetUnsavedShapes replaces). */
const held = (db: object): unknown => (db as { encoder?: { structures?: unknown } }).encoder?.structures;

describe('shapes of a rolled-back write', () => {
  let dir: string;
  let root: RootDatabase;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'shapes-'));
    root = open({ path: dir });
  });
  afterEach(async () => {
    await root.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('are read again when the write saved one, and kept loaded when it saved none', async () => {
    const db = root.openDB<Record<string, unknown>, string>({ name: 'values', sharedStructuresKey: Symbol.for('structures') });
    await db.put('a', { x: 1, y: 2 });
    const before = savedShapes(db);
    expect(before).to.be.greaterThan(0);
    const loaded = held(db);

    // A write of a known shape that fails (a duplicate key, say) saved nothing.
    const known = await root.transaction(() => {
      const count = savedShapes(db);
      db.putSync('b', { x: 3, y: 4 });
      return count;
    });
    forgetUnsavedShapes(db, known);
    expect(held(db)).to.equal(loaded);

    // A write that saves a new shape, then fails: the shape must not stay in memory.
    let countBefore = 0;
    expect(() =>
      root.transactionSync(() => {
        countBefore = savedShapes(db);
        db.putSync('c', { p: 1, q: 2, r: 3 });
        throw new Error('rolled back');
      }),
    ).to.throw('rolled back');
    expect(savedShapes(db)).to.be.greaterThan(countBefore);
    forgetUnsavedShapes(db, countBefore);
    expect(held(db)).to.not.equal(loaded);
    await db.put('d', { p: 5, q: 6, r: 7 });
    expect(db.get('c')).to.equal(undefined);
    expect(db.get('d')).to.deep.equal({ p: 5, q: 6, r: 7 });
  });
});
