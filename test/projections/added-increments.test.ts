import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedDocumentStore } from '../../src/infra/docstore/embedded/embedded-document-store.js';
import type { WriteOp } from '../../src/infra/docstore/port.js';
import { addedIncrements } from '../../src/projections/added-increments.js';

const inc = (id: string, counts: Record<string, number>): WriteOp => ({
  collection: 'counters',
  op: 'updateOne',
  filter: { _id: id },
  update: { $inc: counts, $setOnInsert: { owner: id.split('|')[0] } },
  upsert: true,
});

describe('addedIncrements', () => {
  let dir: string;
  let docs: EmbeddedDocumentStore;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'increments-'));
    docs = await EmbeddedDocumentStore.open({ path: dir });
  });

  afterEach(async () => {
    await docs.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('adds up the increments of one document into one write where its first stood, leaving other writes in order and the given ones unchanged', () => {
    const other: WriteOp = { collection: 'sessions', op: 'replaceOne', filter: { _id: 's' }, doc: { _id: 's' }, upsert: true };
    const ops = [inc('a|h', { n: 1, 'latency.3': 1 }), other, inc('b|h', { n: 1 }), inc('a|h', { n: 2, 'latency.3': 1, 'latency.4': 1 })];
    const given = structuredClone(ops);
    const out = addedIncrements('counters', ops);
    expect(out).to.deep.equal([inc('a|h', { n: 3, 'latency.3': 2, 'latency.4': 1 }), other, inc('b|h', { n: 1 })]);
    expect(ops).to.deep.equal(given);
  });

  it('passes unchanged what is not an upserted increment by _id of the collection', () => {
    const ops: WriteOp[] = [
      { ...inc('a', { n: 1 }), upsert: false } as WriteOp,
      { collection: 'counters', op: 'updateOne', filter: { _id: 'a' }, update: { $inc: { n: 1 }, $set: { x: 1 } }, upsert: true },
      { collection: 'counters', op: 'updateOne', filter: { owner: 'a' }, update: { $inc: { n: 1 } }, upsert: true },
      { ...inc('a', { n: 1 }), collection: 'elsewhere' } as WriteOp,
    ];
    expect(addedIncrements('counters', [...ops, ...ops])).to.deep.equal([...ops, ...ops]);
  });

  it('leaves the store as the writes one by one would', async () => {
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const ops = Array.from({ length: 200 }, () => inc(`${Math.floor(random() * 3)}|${Math.floor(random() * 4)}`, { n: 1 + Math.floor(random() * 5), [`latency.${Math.floor(random() * 3)}`]: 1 }));
    for (const op of ops) await docs.batch([{ ...op, collection: 'one_by_one' } as WriteOp]);
    await docs.batch(addedIncrements('counters', ops));
    const sorted = (rows: unknown[]) => JSON.stringify(rows.sort((a, b) => String((a as { _id: string })._id).localeCompare(String((b as { _id: string })._id))));
    expect(sorted(await docs.collection('counters').find({}))).to.equal(sorted(await docs.collection('one_by_one').find({})));
    expect(addedIncrements('counters', ops).length).to.be.at.most(12);
  });
});
