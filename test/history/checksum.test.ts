import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedDocumentStore } from '../../src/infra/docstore/embedded/embedded-document-store.js';
import type { Document } from '../../src/infra/docstore/port.js';
import { checksum } from '../../src/rebuild/checksum.js';

describe('read model checksum', () => {
  let dir: string;
  const stores: EmbeddedDocumentStore[] = [];
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'checksum-'));
  });
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
    await rm(dir, { recursive: true, force: true });
  });

  async function storeWith(name: string, docs: Document[]): Promise<EmbeddedDocumentStore> {
    const store = await EmbeddedDocumentStore.open({ path: join(dir, name) });
    stores.push(store);
    await store.collection('chats').insertMany(docs);
    return store;
  }

  // More than two pages of the checksum's reads, ids in an order unlike insertion.
  type Doc = Document & { n: number; nested: { b: [number, { y: number; x: number }]; a: string } };
  const docs = (): Doc[] =>
    Array.from({ length: 12_001 }, (_, i) => ({ _id: `c${String((i * 7919) % 12_001).padStart(6, '0')}`, n: i, nested: { b: [1, { y: 2, x: 1 }], a: 'z' } }));

  it('hashes every document of a model in _id order, whatever order they were written in, and counts them', async () => {
    const forward = await storeWith('forward', docs());
    const backward = await storeWith('backward', docs().reverse());
    const a = await checksum(forward, ['chats']);
    const b = await checksum(backward, ['chats']);
    expect(a.documents).to.equal(12_001);
    expect(a).to.deep.equal(b);
  });

  it('changes with one field of one document deep in the last page, and with key order never', async () => {
    const base = await checksum(await storeWith('base', docs()), ['chats']);
    const changed = docs();
    const last = changed.find((d) => d._id === 'c012000') as Doc;
    last.nested.b[1].x = 2;
    expect((await checksum(await storeWith('changed', changed), ['chats'])).sha256).to.not.equal(base.sha256);
    const reordered = docs().map(({ _id, n, nested }) => ({ _id, nested: { a: nested.a, b: nested.b }, n }));
    expect((await checksum(await storeWith('reordered', reordered), ['chats'])).sha256).to.equal(base.sha256);
  });
});
