import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open, type RootDatabase } from 'lmdb';
import { addToGroup, decodeRun, removeFromGroup, scanGroup, type GroupDb } from '../../src/infra/docstore/embedded/id-groups.js';

/** A seeded generator, so a failing case can be run again. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

describe('grouped index runs (id-groups)', () => {
  let dir: string;
  let root: RootDatabase;
  let db: GroupDb;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'id-groups-'));
    root = open({ path: dir, noSync: true });
    db = root.openDB({ name: 'groups', keyEncoding: 'binary', encoding: 'binary' }) as unknown as GroupDb;
  });

  afterEach(async () => {
    await root.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('holds what was added and not removed, in byte order, whether ids come at the end (appended to the last run) or anywhere', () => {
    for (let seed = 1; seed <= 12; seed++) {
      const next = random(seed);
      const group = Buffer.from(`g${seed}\u0000`);
      const model = new Set<string>();
      let clock = 0;
      const idOf = (n: number) => `inst-${seed}|${String(n).padStart(10, '0')}${next() < 0.1 ? 'x'.repeat(Math.floor(next() * 40)) : ''}`;
      for (let step = 0; step < 400; step++) {
        const roll = next();
        let ids: string[];
        if (roll < 0.6) ids = Array.from({ length: 1 + Math.floor(next() * 4) }, () => idOf((clock += 1 + Math.floor(next() * 3))));
        else if (roll < 0.85) ids = Array.from({ length: 1 + Math.floor(next() * 3) }, () => idOf(Math.floor(next() * (clock + 1))));
        else {
          const present = [...model];
          ids = present.length === 0 ? [] : [present[Math.floor(next() * present.length)] as string];
          root.transactionSync(() => removeFromGroup(db, group, ids.map((id) => Buffer.from(id))));
          for (const id of ids) model.delete(id);
          continue;
        }
        const sorted = [...new Set(ids)].map((id) => Buffer.from(id)).sort(Buffer.compare);
        root.transactionSync(() => addToGroup(db, group, sorted));
        for (const id of ids) model.add(id);
      }
      const expected = [...model].map((id) => Buffer.from(id)).sort(Buffer.compare).map((b) => b.toString());
      expect([...scanGroup(db, group, false)].map((b) => b.toString()), `seed ${seed}`).to.deep.equal(expected);
      expect([...scanGroup(db, group, true)].map((b) => b.toString()), `seed ${seed}`).to.deep.equal([...expected].reverse());
      // Runs stay within their size, and each run's key is at most its first id.
      for (const { key, value } of db.getRange({ start: group, end: Buffer.concat([group, Buffer.from([0xff])]) })) {
        expect(value.length, `seed ${seed}`).to.be.at.most(1024 + 64);
        const base = key.subarray(group.length);
        expect(Buffer.compare(base, decodeRun(value, base)[0] as Buffer), `seed ${seed}`).to.be.at.most(0);
      }
    }
  });
});
