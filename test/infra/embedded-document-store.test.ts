import { expect } from 'chai';
import { Query } from 'mingo';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open, type DatabaseOptions } from 'lmdb';
import { EmbeddedDocumentStore, openStorage } from '../../src/infra/docstore/embedded/embedded-document-store.js';
import { defineIndex } from '../../src/infra/docstore/embedded/index-keys.js';
import { KeyBuilder } from '../../src/infra/docstore/embedded/key-codec.js';
import { Storage } from '../../src/infra/docstore/embedded/storage.js';
import { compareValues, EMPTY_ARRAY } from '../../src/infra/docstore/embedded/value-order.js';
import { DuplicateKeyError, type Document, type Filter, type FindOptions, type SortSpec, type Update, type WriteOp } from '../../src/infra/docstore/port.js';
import { documentStoreContract } from '../contract/document-store.contract.js';

async function tempDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'docstore-'));
}

documentStoreContract('embedded', async () => {
  const dir = await tempDir();
  const store = await EmbeddedDocumentStore.open({ path: dir });
  return {
    store,
    async cleanup() {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

describe('EmbeddedDocumentStore', () => {
  let dir: string;
  let store: EmbeddedDocumentStore;

  beforeEach(async () => {
    dir = await tempDir();
    store = await EmbeddedDocumentStore.open({ path: dir });
  });

  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function seedChats(n: number): Promise<void> {
    await store.collection('chats').createIndex({ name: 'chats_order', keys: { instanceId: 1, pinned: -1, lastMessageTs: -1 } });
    const docs = Array.from({ length: n }, (_, i) => ({
      _id: `c${i}`,
      instanceId: i % 4 === 0 ? 'other' : 'main',
      pinned: i % 50 === 0,
      lastMessageTs: i,
      name: `chat ${i}`,
    }));
    await store.batch(docs.map((doc) => ({ collection: 'chats', op: 'insertOne' as const, doc })));
  }

  it('stores documents by shared shape, and still reads documents a version before it stored as maps', async () => {
    await store.close();
    const legacy = open({ path: dir });
    const raw = legacy.openDB<Document, Buffer>({ name: 'documents', keyEncoding: 'binary', encoder: { encodeUndefinedAsNil: true, useRecords: false } } as DatabaseOptions & { name: string });
    const key = (id: string) => new KeyBuilder().string('things').tail(id).build();
    await raw.put(key('old'), { _id: 'old', n: 1, nested: { a: [1, 'x'] } });
    await legacy.close();

    store = await EmbeddedDocumentStore.open({ path: dir });
    const things = store.collection('things');
    await things.insertOne({ _id: 'new', n: 2, nested: { a: [2, 'y'] } });
    await things.insertMany([{ _id: 'newer', n: 3, nested: { a: [] } }]);
    await things.updateOne({ _id: 'old' }, { $set: { n: 10 } });
    expect(await things.find({}, { sort: { _id: 1 } })).to.deep.equal([
      { _id: 'new', n: 2, nested: { a: [2, 'y'] } },
      { _id: 'newer', n: 3, nested: { a: [] } },
      { _id: 'old', n: 10, nested: { a: [1, 'x'] } },
    ]);
    await store.close();

    const after = open({ path: dir, readOnly: true });
    try {
      const bytes = after.openDB<Document, Buffer>({ name: 'documents', keyEncoding: 'binary' }).getBinary(key('newer'));
      // A map starts with 0x8N (fixmap) or 0xde; a document naming its shared shape, with its id.
      expect(bytes?.[0], 'the stored form of a new document').to.be.within(0x40, 0x7f);
    } finally {
      await after.close();
    }
    store = await EmbeddedDocumentStore.open({ path: dir });
    expect(await store.collection('things').count()).to.equal(3);
  });

  it('forgets a document shape saved by a write that rolled back: the same shape written next reads back after a reopen', async () => {
    const things = store.collection('things');
    await things.insertOne({ _id: 'taken', kind: 'first' });
    // The first insert saves the new shape { _id, p, q }, the second fails: the write rolls back.
    const failed = await store
      .batch([
        { collection: 'things', op: 'insertOne', doc: { _id: 'lost', p: 1, q: 2 } },
        { collection: 'things', op: 'insertOne', doc: { _id: 'taken', kind: 'again' } },
      ])
      .catch((err: unknown) => err);
    expect(failed).to.be.instanceOf(DuplicateKeyError);
    await things.insertOne({ _id: 'kept', p: 3, q: 4 });
    await store.close();
    store = await EmbeddedDocumentStore.open({ path: dir });
    expect(await store.collection('things').findOne({ _id: 'kept' })).to.deep.equal({ _id: 'kept', p: 3, q: 4 });
    // Another new shape saved after the reopen does not take the number of the kept one's.
    await store.collection('things').insertOne({ _id: 'later', m: 'x', n: 'y' });
    expect(await store.collection('things').find({}, { sort: { _id: 1 } })).to.deep.equal([
      { _id: 'kept', p: 3, q: 4 },
      { _id: 'later', m: 'x', n: 'y' },
      { _id: 'taken', kind: 'first' },
    ]);
  });

  it('keeps data and indexes across a reopen', async () => {
    const users = store.collection('users');
    await users.createIndex({ name: 'uniq_email', keys: { email: 1 }, unique: true });
    await users.insertOne({ _id: 'u1', email: 'a@example.com' });
    await store.close();

    store = await EmbeddedDocumentStore.open({ path: dir });
    const reopened = store.collection('users');
    expect(await reopened.findOne({ _id: 'u1' })).to.deep.equal({ _id: 'u1', email: 'a@example.com' });
    expect(await store.explain('users', { email: 'a@example.com' })).to.include({ plan: 'index', index: 'uniq_email' });
    const error = await reopened.insertOne({ _id: 'u2', email: 'a@example.com' }).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(DuplicateKeyError);
    await reopened.createIndex({ name: 'uniq_email', keys: { email: 1 }, unique: true });
  });

  it('rolls a failed batch back entirely, index entries included', async () => {
    const chats = store.collection('chats');
    await chats.createIndex({ name: 'by_instance', keys: { instanceId: 1 } });
    await chats.insertOne({ _id: 'taken', instanceId: 'i0' });
    const error = await store
      .batch([
        { collection: 'chats', op: 'insertOne', doc: { _id: 'a', instanceId: 'i1' } },
        { collection: 'chats', op: 'updateOne', filter: { _id: 'taken' }, update: { $set: { instanceId: 'i1' } } },
        { collection: 'chats', op: 'insertOne', doc: { _id: 'taken', instanceId: 'i2' } },
      ])
      .catch((e: unknown) => e);
    expect(error).to.be.instanceOf(DuplicateKeyError);
    expect(await chats.find({})).to.deep.equal([{ _id: 'taken', instanceId: 'i0' }]);
    expect(await chats.count({ instanceId: 'i1' })).to.equal(0);
    expect(await chats.count({ instanceId: 'i0' })).to.equal(1);
  });

  it('rolls back a single write that fails halfway through its index updates', async () => {
    const col = store.collection('people');
    await col.createIndex({ name: 'by_city', keys: { city: 1 } });
    await col.createIndex({ name: 'uniq_name', keys: { name: 1 }, unique: true });
    await col.insertOne({ _id: 'a', name: 'Ana', city: 'Lisbon' });
    await col.insertOne({ _id: 'b', name: 'Bea', city: 'Porto' });
    const error = await col.updateOne({ _id: 'b' }, { $set: { city: 'Faro', name: 'Ana' } }).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(DuplicateKeyError);
    expect(await col.count({ city: 'Faro' })).to.equal(0);
    expect(await col.count({ city: 'Porto' })).to.equal(1);
  });

  it('marks an index multikey when an update makes a document cross an array, even with the same values', async () => {
    const col = store.collection('things');
    await col.createIndex({ name: 'ab', keys: { 'a.b': 1 } });
    await col.insertOne({ _id: 'x', a: null });
    await col.insertOne({ _id: 'y', a: 5 });
    // Same indexed values (null) before and after, but now through an array.
    await col.updateOne({ _id: 'x' }, { $set: { a: [] } });
    await col.updateOne({ _id: 'y' }, { $set: { a: [5] } });
    const all = await col.find({}, { sort: { _id: 1 } });
    for (const filter of [{ 'a.b': null }, { 'a.b': { $exists: false } }]) {
      const expected = all.filter((doc) => new Query(filter).test(doc)).map((doc) => doc._id);
      expect((await col.find(filter, { sort: { _id: 1 } })).map((doc) => doc._id), JSON.stringify(filter)).to.deep.equal(expected);
      expect(await col.count(filter), JSON.stringify(filter)).to.equal(expected.length);
    }
  });

  it('lets a later operation of a batch see what an earlier one stored, undefined stored as null', async () => {
    await store.batch([
      { collection: 'things', op: 'replaceOne', filter: { _id: 'u' }, doc: { _id: 'u', a: undefined, n: 1 }, upsert: true },
      { collection: 'things', op: 'updateOne', filter: { _id: 'u', a: { $exists: true } }, update: { $inc: { n: 1 } } },
      { collection: 'things', op: 'updateOne', filter: { _id: 'u', n: 2 }, update: { $set: { seen: true } } },
    ]);
    expect(await store.collection('things').findOne({ _id: 'u' })).to.deep.equal({ _id: 'u', a: null, n: 2, seen: true });
  });

  describe('decoded-document cache of _id lookups', () => {
    it('never keeps serving a value that a write in flight replaced', async () => {
      const col = store.collection('instances');
      await col.insertOne({ _id: 'i1', name: 'before' });
      expect(await col.findOne({ _id: 'i1' })).to.deep.include({ name: 'before' });
      for (let round = 0; round < 5; round++) {
        // Reads keep running while the write is applied and committed: before its commit they
        // see the old value, and none of those may outlive the commit.
        let done = false;
        const writing = col.updateOne({ _id: 'i1' }, { $set: { name: `after ${round}` } }).then(() => (done = true));
        while (!done) {
          await col.findOne({ _id: 'i1' });
          await new Promise((resolve) => setImmediate(resolve));
        }
        await writing;
        expect(await col.findOne({ _id: 'i1' })).to.deep.include({ name: `after ${round}` });
      }
      await col.deleteOne({ _id: 'i1' });
      expect(await col.findOne({ _id: 'i1' })).to.equal(null);
    });

    it('serves the committed value after a batch that read, wrote and then rolled back', async () => {
      const col = store.collection('instances');
      await col.insertOne({ _id: 'i1', name: 'kept' });
      await col.insertOne({ _id: 'i2', name: 'other' });
      expect(await col.findOne({ _id: 'i1' })).to.deep.include({ name: 'kept' });
      const error = await store
        .batch([
          { collection: 'instances', op: 'updateOne', filter: { _id: 'i1' }, update: { $set: { name: 'rolled back' } } },
          { collection: 'instances', op: 'insertOne', doc: { _id: 'i2', name: 'duplicate' } },
        ])
        .catch((e: unknown) => e);
      expect(error).to.be.instanceOf(DuplicateKeyError);
      expect(await col.findOne({ _id: 'i1' })).to.deep.equal({ _id: 'i1', name: 'kept' });
    });

    it('serves what a commit stored exactly as a read from disk does, whatever the values', async () => {
      const col = store.collection('instances');
      const sparse: unknown[] = [1];
      sparse[2] = 3;
      class Point {
        constructor(readonly x: number) {}
      }
      const docs: Document[] = [
        { _id: 'plain', s: 'x', n: -0, f: 1.5, big: 2 ** 60, nan: NaN, t: true, z: null, list: [1, 'a', [null]], nested: { at: new Date(5), bytes: Buffer.from([1]) } },
        { _id: 'undefined', a: undefined, list: [undefined], nested: { b: undefined } },
        { _id: 'typed', bytes: new Uint8Array([1, 2]), sparse },
        { _id: 'class', p: new Point(3) },
      ];
      await store.batch(docs.map((doc) => ({ collection: 'instances', op: 'insertOne' as const, doc })));
      await col.updateOne({ _id: 'plain' }, { $inc: { f: 1 } });
      const fromCommit = await Promise.all(docs.map((d) => col.findOne({ _id: d._id })));
      await store.close();
      store = await EmbeddedDocumentStore.open({ path: dir });
      const fromDisk = await Promise.all(docs.map((d) => store.collection('instances').findOne({ _id: d._id })));
      expect(fromCommit).to.deep.equal(fromDisk);
      expect(fromDisk[0]).to.deep.include({ f: 2.5 });
    });

    it('serves the last of several commits that wrote one document, and nothing of a rolled-back one', async () => {
      const col = store.collection('instances');
      await col.insertOne({ _id: 'i1', n: 0 });
      await col.insertOne({ _id: 'i2', n: 0 });
      const writes = Array.from({ length: 20 }, (_, i) => col.updateOne({ _id: 'i1' }, { $set: { n: i + 1 } }));
      const failing = store.batch([
        { collection: 'instances', op: 'updateOne', filter: { _id: 'i1' }, update: { $set: { n: -1 } } },
        { collection: 'instances', op: 'insertOne', doc: { _id: 'i2' } },
      ]);
      await Promise.all([...writes, failing.catch(() => undefined)]);
      expect(await col.findOne({ _id: 'i1' })).to.deep.equal({ _id: 'i1', n: 20 });
      await col.updateOne({ _id: 'i1' }, { $inc: { n: 1 } });
      expect(await col.findOne({ _id: 'i1' })).to.deep.equal({ _id: 'i1', n: 21 });
    });

    it('gives a later write what the commit stored, not the value it was handed', async () => {
      const col = store.collection('instances');
      const sparse: unknown[] = [1];
      sparse[2] = 3;
      await col.insertOne({ _id: 'odd', sparse, list: [undefined], n: -0 });
      // Stored as [1, null, 3], [null] and 0: a write that reads the document must match those.
      expect(await col.updateOne({ _id: 'odd', 'sparse.1': { $type: 'null' } }, { $set: { a: 1 } })).to.include({ modifiedCount: 1 });
      expect(await col.updateOne({ _id: 'odd', 'list.0': { $type: 'null' } }, { $set: { b: 1 } })).to.include({ modifiedCount: 1 });
      expect(await col.replaceOne({ _id: 'odd' }, { _id: 'odd', sparse: [1, null, 3], list: [null], n: 0, a: 1, b: 1 })).to.include({ modifiedCount: 0 });
    });

    it('gives later writes the last committed value, never one a rolled-back write left', async () => {
      const col = store.collection('instances');
      await col.insertOne({ _id: 'i1', n: 0 });
      await col.insertOne({ _id: 'i2', n: 0 });
      for (let round = 1; round <= 3; round++) {
        const increments = Array.from({ length: 10 }, () => col.updateOne({ _id: 'i1' }, { $inc: { n: 1 } }));
        const failing = store.batch([
          { collection: 'instances', op: 'updateOne', filter: { _id: 'i1' }, update: { $inc: { n: 1000 } } },
          { collection: 'instances', op: 'insertOne', doc: { _id: 'i2' } },
        ]);
        await Promise.all([...increments, failing.catch(() => undefined)]);
        // A write right after: it reads what the commits left.
        await store.batch([{ collection: 'instances', op: 'updateOne', filter: { _id: 'i1', n: 10 * round }, update: { $set: { round } } }]);
        expect(await col.findOne({ _id: 'i1' })).to.deep.equal({ _id: 'i1', n: 10 * round, round });
      }
    });

    it('hands out copies a caller may change, nested values included', async () => {
      const col = store.collection('instances');
      await col.insertOne({ _id: 'i1', labels: { a: 1 }, list: [{ b: 2 }], at: new Date(0), bytes: Buffer.from([1, 2]) });
      for (let i = 0; i < 2; i++) {
        const doc = (await col.findOne({ _id: 'i1' })) as Document & { labels: { a: number }; list: { b: number }[]; at: Date; bytes: Buffer };
        doc.labels.a = 9;
        (doc.list[0] as { b: number }).b = 9;
        doc.at.setTime(5);
        doc.bytes[0] = 9;
      }
      expect(await col.findOne({ _id: 'i1' })).to.deep.equal({ _id: 'i1', labels: { a: 1 }, list: [{ b: 2 }], at: new Date(0), bytes: Buffer.from([1, 2]) });
    });
  });

  it('reads an equality prefix + matching sort + limit in index order, stopping after skip + limit', async () => {
    await seedChats(2000);
    const sort = { pinned: -1, lastMessageTs: -1 } as const;
    const first = await store.explain('chats', { instanceId: 'main' }, { sort, limit: 50 });
    expect(first).to.deep.equal({ plan: 'index', index: 'chats_order', ordered: true, covered: true, docsExamined: 50, returned: 50 });
    const deep = await store.explain('chats', { instanceId: 'main' }, { sort, skip: 1400, limit: 50 });
    expect(deep).to.include({ docsExamined: 50, returned: 50 });
    const reversed = await store.explain('chats', { instanceId: 'main' }, { sort: { pinned: 1, lastMessageTs: 1 }, limit: 10 });
    expect(reversed).to.include({ plan: 'index', ordered: true, docsExamined: 10 });

    const page = await store.collection('chats').find({ instanceId: 'main' }, { sort, limit: 3 });
    expect(page.map((d) => d._id)).to.deep.equal(['c1950', 'c1850', 'c1750']);
  });

  it('reads a grouped index group by group in _id order: a page of a chat or of a word examines that page only', async () => {
    const col = store.collection('msgs');
    await col.createIndex({ name: 'by_chat', keys: { inst: 1, chat: 1 }, grouped: true });
    await col.createIndex({ name: 'search', keys: { inst: 1 }, text: 'words' });
    const id = (i: number) => `i|${String(i).padStart(5, '0')}`;
    await col.insertMany(Array.from({ length: 3000 }, (_, i) => ({ _id: id(i), inst: 'i', chat: `c${i % 3}`, words: i % 10 === 0 ? ['order', 'x'] : ['x'] })));
    const page = await store.explain('msgs', { inst: 'i', chat: 'c1' }, { sort: { _id: -1 }, limit: 50 });
    expect(page).to.deep.equal({ plan: 'groups', index: 'by_chat', ordered: true, covered: false, docsExamined: 50, returned: 50 });
    const before = await store.explain('msgs', { inst: 'i', chat: 'c1', _id: { $gt: 'i|', $lt: id(1501) } }, { sort: { _id: -1 }, limit: 50 });
    expect(before).to.include({ plan: 'groups', docsExamined: 50, returned: 50 });
    const words = await store.explain('msgs', { inst: 'i', $text: { $search: '"order" "x"' } }, { sort: { _id: -1 }, limit: 20 });
    expect(words).to.include({ plan: 'groups', index: 'search', docsExamined: 20, returned: 20 });
    const found = await col.find({ inst: 'i', $text: { $search: '"order"' } }, { sort: { _id: -1 }, limit: 2 });
    expect(found.map((d) => d._id)).to.deep.equal([id(2990), id(2980)]);
  });

  it('rebuilds a text index stored one entry per word (a store of an earlier version) as runs of ids when it is declared', async () => {
    const col = store.collection('notes');
    await col.insertMany([
      { _id: 'n1', owner: 'a', words: ['cafe', 'leite'] },
      { _id: 'n2', owner: 'a', words: ['cafe'] },
    ]);
    await store.close();
    // The old layout, as an earlier version wrote it: entries in index-entries, no `grouped` in the catalog.
    const root = open({ path: dir });
    const storage = openStorage(root);
    const old = defineIndex('notes', { name: 'words', keys: { owner: 1 }, text: 'words' }, false, false, false);
    root.transactionSync(() => storage.buildIndex(old));
    const entries = () => [...root.openDB({ name: 'index-entries', keyEncoding: 'binary', encoding: 'string' }).getKeys()].length;
    expect(entries()).to.equal(3);
    await root.close();
    store = await EmbeddedDocumentStore.open({ path: dir });
    expect(await store.explain('notes', { owner: 'a', $text: { $search: '"cafe"' } })).to.include({ plan: 'index', returned: 2 });
    await store.collection('notes').createIndex({ name: 'words', keys: { owner: 1 }, text: 'words' });
    expect(await store.explain('notes', { owner: 'a', $text: { $search: '"cafe"' } }, { sort: { _id: -1 } })).to.include({ plan: 'groups', returned: 2 });
    const again = await store.collection('notes').find({ owner: 'a', $text: { $search: '"leite"' } });
    expect(again.map((d) => d._id)).to.deep.equal(['n1']);
    await store.close();
    const reopened = open({ path: dir });
    expect([...reopened.openDB({ name: 'index-entries', keyEncoding: 'binary', encoding: 'string' }).getKeys()].length).to.equal(0);
    await reopened.close();
    store = await EmbeddedDocumentStore.open({ path: dir });
  });

  it('reads a range of _id from where it starts: the next page after an _id examines that page only', async () => {
    await seedChats(2000);
    const next = await store.explain('chats', { _id: { $gt: 'c1500' } }, { sort: { _id: 1 }, limit: 10 });
    expect(next).to.deep.equal({ plan: 'scan', ordered: true, covered: false, docsExamined: 10, returned: 10 });
    const back = await store.explain('chats', { _id: { $lte: 'c1500' } }, { sort: { _id: -1 }, limit: 10 });
    expect(back).to.include({ plan: 'scan', ordered: true, docsExamined: 10 });
    const between = await store.explain('chats', { _id: { $gte: 'c1990', $lt: 'c2' } });
    expect(between).to.include({ docsExamined: 10, returned: 10 });
    // A bound that is not ASCII is not used (UTF-8 and the query engine's order may differ): a full scan, same answers.
    const wide = await store.explain('chats', { _id: { $gt: 'c1500\u00e9' } }, { sort: { _id: 1 }, limit: 10 });
    expect(wide.docsExamined).to.be.above(10);
  });

  it('reads a string range of the key after the pinned ones from where it starts: a seek past one lane skips its entries', async () => {
    const jobs = store.collection('jobs');
    await jobs.createIndex({ name: 'heads', keys: { state: 1, lane: 1, pos: 1 }, partialFilterExpression: { state: 'pending' } });
    const backlog = Array.from({ length: 1500 }, (_, i) => ({ _id: `a${i}`, state: 'pending', lane: 'i1:a', pos: i }));
    await jobs.insertMany([...backlog, { _id: 'b', state: 'pending', lane: 'i1:b', pos: 5000 }, { _id: 'c', state: 'pending', lane: 'i2:c', pos: 7 }]);
    const seek = (after: string) => store.explain('jobs', { state: 'pending', lane: { $gt: after } }, { sort: { lane: 1, pos: 1 }, limit: 1 });
    expect(await seek('')).to.include({ index: 'heads', ordered: true, docsExamined: 1, returned: 1 });
    expect(await seek('i1:a')).to.include({ index: 'heads', ordered: true, docsExamined: 1, returned: 1 });
    expect(await jobs.find({ state: 'pending', lane: { $gt: 'i1:a' } }, { sort: { lane: 1, pos: 1 }, limit: 1 })).to.deep.equal([{ _id: 'b', state: 'pending', lane: 'i1:b', pos: 5000 }]);
    expect(await seek('i2:c')).to.include({ docsExamined: 0, returned: 0 });
    expect(await store.explain('jobs', { state: 'pending', lane: { $gte: 'i1:b', $lte: 'i1:b' } })).to.include({ docsExamined: 1, returned: 1 });
    expect(await store.explain('jobs', { state: 'pending', lane: { $lt: 'i1:b' } }, { sort: { lane: -1, pos: -1 }, limit: 1 })).to.include({ docsExamined: 1, returned: 1 });
    expect(await store.explain('jobs', { state: 'pending', lane: { $gt: 'i2', $lt: 'i1' } })).to.include({ docsExamined: 0, returned: 0 });
  });

  it('answers string ranges through an index as a scan does, for mixed types, bounds and strings that are not ASCII', async () => {
    let seed = 11;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return (seed >>> 16) % n;
    };
    const pick = <V>(values: readonly V[]): V => values[random(values.length)] as V;
    const sValues = ['', 'a', 'a\u0000', 'ab', 'b', 'b\u00e9', 'b\ud83d\ude00', 'b\uffff', 'c', 'zz', 1, -2, null, undefined, true, { k: 'a' }] as const;
    const docs = Array.from({ length: 400 }, (_, i) => {
      const doc: Record<string, unknown> = { _id: `d${String(i).padStart(3, '0')}`, c: pick(['p', 'q']), n: random(4) };
      const v = pick(sValues);
      if (v !== undefined) doc.s = v;
      return doc as Document;
    });
    const plain = store.collection('plain');
    const indexed = store.collection('indexed');
    await indexed.createIndex({ name: 'c_s_n', keys: { c: 1, s: 1, n: 1 } });
    await indexed.createIndex({ name: 's', keys: { s: 1 } });
    for (const collection of ['plain', 'indexed']) await store.batch(docs.map((doc) => ({ collection, op: 'insertOne' as const, doc })));
    const bounds = ['', 'a', 'ab', 'b', 'bz', 'c', 'zz', '~'];
    const range = (): Record<string, string> =>
      pick([
        () => ({ $gt: pick(bounds) }),
        () => ({ $gte: pick(bounds) }),
        () => ({ $lt: pick(bounds) }),
        () => ({ $lte: pick(bounds) }),
        () => ({ $gte: pick(bounds), $lt: pick(bounds) }),
        () => ({ $gt: pick(bounds), $lte: pick(bounds) }),
      ])();
    // Read through an index whose pinned keys it follows, a range examines exactly the documents it answers.
    let exact = 0;
    for (let round = 0; round < 300; round++) {
      const filter: Filter = pick([() => ({ s: range() }), () => ({ c: pick(['p', 'q']), s: range() }), () => ({ c: { $in: ['p', 'q'] }, s: range() })])();
      const sort = pick<SortSpec>([{}, { s: 1 }, { s: -1 }, { s: 1, n: 1 }, { c: 1, s: 1, n: 1 }]);
      const options: FindOptions = { sort: { ...sort, _id: pick([1, -1] as const) }, limit: pick([0, 1, 5]) };
      const context = JSON.stringify({ filter, options });
      expect(ids(await indexed.find(filter, options)), context).to.deep.equal(ids(await plain.find(filter, options)));
      expect(await indexed.count(filter), context).to.equal(await plain.count(filter));
      const explained = await store.explain('indexed', filter, options);
      if (explained.plan === 'index' && !options.limit && (explained.index === 's' || 'c' in filter)) {
        expect(explained.docsExamined, context).to.equal(explained.returned);
        exact++;
      }
    }
    expect(exact).to.be.above(30);
  });

  it('uses the index range for a filter it only partly covers, testing just those candidates', async () => {
    await seedChats(2000);
    const explained = await store.explain('chats', { instanceId: 'other', name: { $regex: '^chat 1' } }, { sort: { pinned: -1, lastMessageTs: -1 }, limit: 5 });
    expect(explained).to.include({ plan: 'index', ordered: true, covered: false });
    expect(explained.docsExamined).to.be.below(500);
    const unsorted = await store.explain('chats', { instanceId: 'other' }, { sort: { name: 1 } });
    expect(unsorted).to.include({ plan: 'index', ordered: false, docsExamined: 500, returned: 500 });
  });

  it('falls back to a full scan when no index applies', async () => {
    await seedChats(100);
    expect(await store.explain('chats', { name: 'chat 7' })).to.include({ plan: 'scan', docsExamined: 100, returned: 1 });
    expect(await store.explain('chats', { _id: 'c7' })).to.include({ plan: 'ids', docsExamined: 1, returned: 1 });
  });

  it('starts using a new index once its entries are committed', async () => {
    await seedChats(100);
    const col = store.collection('chats');
    const creating = col.createIndex({ name: 'by_name', keys: { name: 1 } });
    expect((await store.explain('chats', { name: 'chat 7' })).plan).to.equal('scan');
    await creating;
    expect(await store.explain('chats', { name: 'chat 7' })).to.include({ plan: 'index', index: 'by_name', docsExamined: 1 });
  });

  it('returns the same results through indexes as through a scan, for random mixed-type data', async () => {
    let seed = 7;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return (seed >>> 16) % n; // the low bits of this generator repeat quickly
    };
    const pick = <V>(values: readonly V[]): V => values[random(values.length)] as V;
    const aValues = [1, 2, 'x', 'y', null, undefined, true, false, [1, 'x'], [], { k: 1 }, 2.5, -1] as const;
    const docs = Array.from({ length: 400 }, (_, i) => {
      const doc: Record<string, unknown> = { _id: `d${String(i).padStart(3, '0')}` };
      const a = pick(aValues);
      if (a !== undefined) doc.a = a;
      if (random(5) > 0) doc.b = random(5);
      doc.c = pick(['p', 'q', 'r']);
      return doc as Document;
    });
    const plain = store.collection('plain');
    const indexed = store.collection('indexed');
    await indexed.createIndex({ name: 'a_b', keys: { a: 1, b: -1 } });
    await indexed.createIndex({ name: 'b_a', keys: { b: 1, a: 1 } });
    await indexed.createIndex({ name: 'c_b', keys: { c: 1, b: 1 } });
    for (const collection of ['plain', 'indexed']) {
      await store.batch(docs.map((doc) => ({ collection, op: 'insertOne' as const, doc })));
    }

    const scalars = [1, 2, 'x', null, true, 2.5, -1, 3];
    const plans = new Set<string>();
    for (let round = 0; round < 300; round++) {
      const filter = pick([
        () => ({ a: pick(scalars) }),
        () => ({ a: { $in: [pick(scalars), pick(scalars)] } }),
        () => ({ a: pick(scalars), b: random(5) }),
        () => ({ b: random(5), a: { $in: [pick(scalars), pick(scalars)] } }),
        () => ({ a: pick(scalars), b: { $gt: 1 } }),
        () => ({ c: pick(['p', 'q']), b: { $in: [random(5), random(5)] } }),
        () => ({ c: pick(['p', 'q']) }),
        () => ({ c: pick(['p', 'q']), a: pick(scalars) }),
        () => ({ a: { $gt: pick(scalars) } }),
        () => ({ b: random(5) }),
        () => ({}),
      ])();
      const sort = pick<SortSpec>([{}, { a: 1 }, { a: -1 }, { b: -1, a: 1 }, { a: 1, b: -1 }, { a: -1, b: 1 }, { b: 1 }, { c: 1, b: 1 }]);
      const options = { sort: { ...sort, _id: pick([1, -1] as const) }, skip: pick([0, 0, 3]), limit: pick([0, 5, 50]) };
      const context = JSON.stringify({ filter, options });
      expect(ids(await indexed.find(filter, options)), context).to.deep.equal(ids(await plain.find(filter, options)));
      expect(await indexed.count(filter), context).to.equal(await plain.count(filter));
      const explained = await store.explain('indexed', filter, options);
      plans.add(`${explained.plan}${explained.ordered ? ' ordered' : ''}${explained.covered ? ' covered' : ''}`);
    }
    expect([...plans]).to.include.members(['index ordered covered', 'index ordered', 'index', 'scan']);
  });

  describe('insertMany encoded before its transaction', () => {
    /** Every key and value of the store's databases, as hex: what two stores hold, byte for byte. */
    async function rawContents(path: string): Promise<Record<string, string[]>> {
      const env = open({ path, readOnly: true });
      try {
        const out: Record<string, string[]> = {};
        for (const name of ['documents', 'index-entries', 'index-catalog']) {
          const db = env.openDB({ name, keyEncoding: 'binary', encoding: 'binary' } as DatabaseOptions & { name: string });
          out[name] = [...db.getRange()].map(({ key, value }) => `${(key as Buffer).toString('hex')}=${(value as Buffer).toString('hex')}`);
        }
        return out;
      } finally {
        await env.close();
      }
    }

    const people = () => [
      { _id: 'p1', name: 'Ana', tags: ['a', 'b'], address: { city: 'Lisbon' }, n: 1 },
      { _id: 'p2', name: 'Bea', tags: [], address: { city: 'Porto' }, n: 2.5 },
      { _id: 'p3', name: 'Caio', tags: 'solo', n: -0 },
      { _id: 'p4', name: 'Dora', extra: { deep: [{ x: 1 }] }, n: null },
    ];

    async function seeded(into: EmbeddedDocumentStore): Promise<void> {
      const col = into.collection('people');
      await col.createIndex({ name: 'by_tag', keys: { tags: 1, n: -1 } });
      await col.createIndex({ name: 'by_name', keys: { name: 1 }, unique: true });
      await col.createIndex({ name: 'by_city', keys: { 'address.city': 1 }, partialFilterExpression: { 'address.city': { $exists: true } } });
    }

    it('writes byte for byte what the insert inside the transaction writes: documents, shapes, index entries, multikey flags', async () => {
      // This store prepares (nothing else in flight); the other one inserts inside the transaction
      // (a write in flight when insertMany is called), in the same order of writes.
      await seeded(store);
      await store.collection('other').insertOne({ _id: 'o', first: true });
      await store.collection('people').insertMany(people());
      const otherDir = await tempDir();
      const other = await EmbeddedDocumentStore.open({ path: otherDir });
      try {
        await seeded(other);
        const inFlight = other.collection('other').insertOne({ _id: 'o', first: true });
        await other.collection('people').insertMany(people());
        await inFlight;
        expect(await other.collection('people').find({ tags: 'a' })).to.deep.equal(await store.collection('people').find({ tags: 'a' }));
        await other.close();
        await store.close();
        const prepared = await rawContents(dir);
        expect(prepared['index-entries']).to.have.length.above(8);
        expect(prepared).to.deep.equal(await rawContents(otherDir));
      } finally {
        await other.close();
        await rm(otherDir, { recursive: true, force: true });
        store = await EmbeddedDocumentStore.open({ path: dir });
      }
      expect(await store.explain('people', { tags: 'b' })).to.include({ plan: 'index', index: 'by_tag' });
      expect((await store.collection('people').find({ tags: 'b' })).map((d) => d._id)).to.deep.equal(['p1']);
    });

    it('refuses an _id given twice or already there, and a unique key taken (named in the error), writing nothing of the insert', async () => {
      await seeded(store);
      const col = store.collection('people');
      await col.insertOne({ _id: 'p0', name: 'Zoe' });
      const twice = await col.insertMany([{ _id: 'x', name: 'X', tags: ['t'] }, { _id: 'x', name: 'Y' }]).catch((e: unknown) => e);
      expect(twice).to.be.instanceOf(DuplicateKeyError);
      const there = await col.insertMany([{ _id: 'y', name: 'Y', tags: ['t'] }, { _id: 'p0', name: 'W' }]).catch((e: unknown) => e);
      expect(there).to.be.instanceOf(DuplicateKeyError);
      const taken = await col.insertMany([{ _id: 'z', name: 'Z', tags: ['t'] }, { _id: 'w', name: 'Zoe' }]).catch((e: unknown) => e);
      expect(taken).to.be.instanceOf(DuplicateKeyError);
      expect((taken as Error).message).to.include('by_name').and.include('Zoe');
      expect(await col.find({})).to.deep.equal([{ _id: 'p0', name: 'Zoe' }]);
      expect(await col.count({ tags: 't' })).to.equal(0);
    });

    it('keeps a document shape it met first in an insert that failed: documents of that shape read back after a reopen', async () => {
      const col = store.collection('things');
      await col.insertOne({ _id: 'taken', kind: 'first' });
      const failed = await col.insertMany([{ _id: 'new', zz: 1, yy: 'a' }, { _id: 'taken', zz: 2, yy: 'b' }]).catch((e: unknown) => e);
      expect(failed).to.be.instanceOf(DuplicateKeyError);
      await col.insertMany([{ _id: 'kept', zz: 3, yy: 'c' }]);
      await col.insertOne({ _id: 'after', q: 1 });
      await store.close();
      store = await EmbeddedDocumentStore.open({ path: dir });
      expect(await store.collection('things').find({}, { sort: { _id: 1 } })).to.deep.equal([
        { _id: 'after', q: 1 },
        { _id: 'kept', zz: 3, yy: 'c' },
        { _id: 'taken', kind: 'first' },
      ]);
    });

    it('forgets a document shape met by a value that failed to encode: the next document of that shape reads back after a reopen', async () => {
      const col = store.collection('things');
      const failed = await col.insertMany([{ _id: 'a', fresh: 1, big: 2n ** 70n } as unknown as Document]).catch((e: unknown) => e);
      expect(failed).to.be.instanceOf(Error);
      await col.insertMany([{ _id: 'b', fresh: 2, big: 1 }]);
      await store.close();
      store = await EmbeddedDocumentStore.open({ path: dir });
      expect(await store.collection('things').find({})).to.deep.equal([{ _id: 'b', fresh: 2, big: 1 }]);
    });

    it('indexes the documents by the indexes there are when it writes, should one be made after it was prepared', async () => {
      const storage = (store as unknown as { storage: Storage }).storage;
      const write = (store as unknown as { write: <R>(work: (s: Storage) => R) => Promise<R> }).write.bind(store);
      const prepared = storage.prepareInserts('people', people());
      await store.collection('people').createIndex({ name: 'by_name', keys: { name: 1 } });
      await write((s) => s.loadPrepared(prepared));
      expect(await store.explain('people', { name: 'Bea' })).to.include({ plan: 'index', index: 'by_name' });
      expect((await store.collection('people').find({ name: { $in: ['Ana', 'Bea', 'Caio', 'Dora'] } })).map((d) => d._id)).to.deep.equal(['p1', 'p2', 'p3', 'p4']);
    });
  });

  describe('partial indexes', () => {
    const open = { name: 'open', keys: { instance: 1, seq: 1 }, partialFilterExpression: { state: { $in: ['queued', 'retrying'] } } } as const;

    async function seedJobs(): Promise<void> {
      await store.collection('jobs').createIndex(open);
      const docs = Array.from({ length: 200 }, (_, i) => ({ _id: `j${String(i).padStart(3, '0')}`, instance: `i${i % 4}`, seq: i, state: i < 180 ? 'done' : i % 2 ? 'queued' : 'retrying' }));
      await store.batch(docs.map((doc) => ({ collection: 'jobs', op: 'insertOne' as const, doc })));
    }

    it('serves only queries that imply the filter, and holds only the documents it admits', async () => {
      await seedJobs();
      const queued = await store.explain('jobs', { instance: 'i1', state: 'queued' }, { sort: { seq: 1 } });
      expect(queued).to.include({ plan: 'index', index: 'open', ordered: true, covered: false, returned: 5 });
      expect(queued.docsExamined).to.equal(5);
      expect(await store.explain('jobs', { instance: 'i1', state: { $in: ['retrying', 'queued'] } })).to.include({ plan: 'index', index: 'open', covered: true });
      expect((await store.explain('jobs', { instance: 'i1' })).plan).to.equal('scan');
      expect((await store.explain('jobs', { instance: 'i1', state: 'done' })).plan).to.equal('scan');
      expect((await store.explain('jobs', { instance: 'i1', state: { $in: ['done', 'queued'] } })).plan).to.equal('scan');
      expect(await store.collection('jobs').count({ instance: 'i1', state: { $in: ['queued', 'retrying'] } })).to.equal(5);
    });

    it('moves documents in and out as their fields change, and keeps its filter across a reopen', async () => {
      await seedJobs();
      const jobs = store.collection('jobs');
      await jobs.updateMany({ instance: 'i1', state: 'queued' }, { $set: { state: 'done' } });
      await jobs.updateOne({ _id: 'j001' }, { $set: { state: 'retrying' } });
      expect(await jobs.count({ instance: 'i1', state: { $in: ['queued', 'retrying'] } })).to.equal(1);
      await store.close();
      store = await EmbeddedDocumentStore.open({ path: dir });
      const reopened = store.collection('jobs');
      await reopened.createIndex(open);
      await reopened.insertOne({ _id: 'k1', instance: 'i1', seq: 500, state: 'done' });
      await reopened.insertOne({ _id: 'k2', instance: 'i1', seq: 501, state: 'queued' });
      expect(await store.explain('jobs', { instance: 'i1', state: { $in: ['queued', 'retrying'] } })).to.include({ plan: 'index', index: 'open', covered: true });
      expect(ids(await reopened.find({ instance: 'i1', state: { $in: ['queued', 'retrying'] } }, { sort: { seq: 1 } }))).to.deep.equal(['j001', 'k2']);
      expect(await reopened.count({ instance: 'i1', state: { $in: ['queued', 'retrying'] } })).to.equal(2);
    });

    it('drops an index with every entry, so recreating it under the name starts clean', async () => {
      await seedJobs();
      const jobs = store.collection('jobs');
      expect(await jobs.dropIndex('open')).to.equal(true);
      await jobs.updateMany({}, { $set: { state: 'queued' } });
      expect((await store.explain('jobs', { instance: 'i1', state: 'queued' })).plan).to.equal('scan');
      await store.close();
      store = await EmbeddedDocumentStore.open({ path: dir });
      await store.collection('jobs').createIndex({ ...open, partialFilterExpression: { state: 'queued' } });
      expect(await store.explain('jobs', { instance: 'i1', state: 'queued' })).to.include({ plan: 'index', covered: true, returned: 50 });
      expect(await store.collection('jobs').count({ instance: 'i1', state: 'queued' })).to.equal(50);
    });

    it('keeps maintaining an index whose drop rolled back', async () => {
      await seedJobs();
      const jobs = store.collection('jobs');
      const original = Storage.prototype.dropIndex;
      Storage.prototype.dropIndex = function (this: Storage, def) {
        original.call(this, def);
        throw new Error('the commit failed');
      };
      try {
        expect(await jobs.dropIndex('open').catch((e: unknown) => e)).to.be.instanceOf(Error);
      } finally {
        Storage.prototype.dropIndex = original;
      }
      await jobs.insertOne({ _id: 'k1', instance: 'i1', seq: 500, state: 'queued' });
      await store.close();
      store = await EmbeddedDocumentStore.open({ path: dir });
      expect(await store.explain('jobs', { instance: 'i1', state: 'queued' })).to.include({ index: 'open', returned: 6 });
      expect(await store.collection('jobs').count({ instance: 'i1', state: { $in: ['queued', 'retrying'] } })).to.equal(6);
    });

    it('returns the same results as a scan under random writes', async () => {
      let seed = 11;
      const random = (n: number): number => {
        seed = (seed * 1103515245 + 12345) % 2147483648;
        return (seed >>> 16) % n;
      };
      const pick = <V>(values: readonly V[]): V => values[random(values.length)] as V;
      const states = ['queued', 'retrying', 'done', 'failed', null, 3] as const;
      const plain = store.collection('plain');
      const indexed = store.collection('indexed');
      await indexed.createIndex({ name: 'open', keys: { i: 1, seq: 1 }, partialFilterExpression: { state: { $in: ['queued', 'retrying'] } } });
      await indexed.createIndex({ name: 'failed', keys: { i: 1, state: 1, seq: -1 }, partialFilterExpression: { state: 'failed' } });
      await indexed.createIndex({ name: 'typed', keys: { host: 1, due: 1 }, partialFilterExpression: { host: { $type: 'string' } } });
      await indexed.createIndex({ name: 'late', keys: { due: 1 }, partialFilterExpression: { due: { $gte: 50 }, state: { $exists: true } } });
      const doc = (n: number): Document => {
        const d: Document = { _id: `d${n}`, i: `i${random(3)}`, seq: n, due: random(100) };
        const state = pick(states);
        if (state !== null || random(2)) d.state = state;
        if (random(2)) d.host = pick(['h1', 'h2', 7, null]);
        return d;
      };
      const both = (ops: (collection: string) => WriteOp[]) => Promise.all(['plain', 'indexed'].map((c) => store.batch(ops(c))));
      const docs = Array.from({ length: 300 }, (_, n) => doc(n));
      await both((collection) => docs.map((d) => ({ collection, op: 'insertOne' as const, doc: d })));
      const plans = new Set<string>();
      for (let round = 0; round < 200; round++) {
        const target = `d${random(300)}`;
        const change = pick<Update>([{ $set: { state: pick(states) } }, { $unset: { state: '' } }, { $set: { host: pick(['h1', 'h2', 5]) } }, { $set: { due: random(100) } }, { $unset: { host: '' } }]);
        await both((collection) => [{ collection, op: 'updateOne', filter: { _id: target }, update: change }]);
        const filter = pick<() => Filter>([
          () => ({ i: `i${random(3)}`, state: pick(['queued', 'retrying']) }),
          () => ({ i: `i${random(3)}`, state: { $in: ['queued', 'retrying'] } }),
          () => ({ i: `i${random(3)}`, state: 'failed', seq: { $gt: random(300) } }),
          () => ({ state: 'failed' }),
          () => ({ i: `i${random(3)}`, state: 'failed' }),
          () => ({ host: pick(['h1', 'h2']), due: { $lt: random(100) } }),
          () => ({ host: pick(['h1', 7, null]) }),
          () => ({ due: { $gte: 60 }, state: { $exists: true } }),
          () => ({ due: pick([10, 55, 80]), state: pick(['done', 'failed']) }),
          () => ({ i: `i${random(3)}` }),
        ])();
        const options = pick<FindOptions>([{}, { sort: { seq: 1 } }, { sort: { seq: -1 }, limit: 5 }, { sort: { due: 1, _id: 1 }, skip: 2, limit: 10 }]);
        const context = JSON.stringify({ filter, options, round });
        // Without a sort, the order is the plan's (as in MongoDB): compare the sets.
        const order = (list: string[]) => (options.sort ? list : [...list].sort());
        expect(order(ids(await indexed.find(filter, options))), context).to.deep.equal(order(ids(await plain.find(filter, options))));
        expect(await indexed.count(filter), context).to.equal(await plain.count(filter));
        const explained = await store.explain('indexed', filter, options);
        plans.add(`${explained.index ?? explained.plan}${explained.covered ? ' covered' : ''}`);
      }
      expect([...plans]).to.include.members(['open', 'open covered', 'failed', 'failed covered', 'typed', 'late', 'scan']);
    });
  });

  it('encodes index keys byte for byte as stores written by earlier versions hold them', () => {
    const golden: [unknown, 1 | -1, string][] = [
      [null, 1, '07026964'],
      [-2.5, -1, '07fcc0040000000000006964'],
      ['a\0b', 1, '07046100ff6200006964'],
      [{ a: [1, 'é'] }, 1, '070501066100000103bff00000000000000104c3a9000000006964'],
      [new Uint8Array([0, 255]), -1, '07f8fffffffdff006964'],
      [new Date(86_400_000), 1, '0709c1949970000000006964'],
      [/x/i, 1, '070a7800006900006964'],
      [true, 1, '0708016964'],
      [EMPTY_ARRAY, 1, '07016964'],
    ];
    for (const [value, dir, hex] of golden) {
      expect(new KeyBuilder(Buffer.from([7])).value(value, dir).tail('id').build().toString('hex'), String(value)).to.equal(hex);
    }
    // A built key stays as it was while its builder goes on (and outgrows its first buffer).
    const builder = new KeyBuilder().string('c');
    const built = builder.build();
    const before = Buffer.from(built);
    builder.value('x'.repeat(500)).value(1, -1);
    expect(built.equals(before)).to.equal(true);
  });

  it('orders index keys exactly like MongoDB comparison, ascending and descending', () => {
    const values: unknown[] = [
      EMPTY_ARRAY, null, -Infinity, -1e9, -2.5, -0, 0, 1e-9, 2, 3.5, 1e21, Infinity, NaN,
      '', 'a', 'a\0', 'a\0b', 'aa', 'b', 'B', 'é', '\uffff', '😀',
      {}, { a: 1 }, { a: 2 }, { a: 1, b: 1 }, { b: 0 }, { a: 'x' }, { a: null },
      [], [1], [1, 2], [2], ['a'], [[]],
      new Uint8Array([9]), new Uint8Array([1, 2]),
      false, true, new Date(-1), new Date(0), new Date(5), /a/, /a/i, /b/,
    ];
    for (const dir of [1, -1] as const) {
      const byCompare = [...values].sort((a, b) => dir * compareValues(a, b));
      const encoded = (v: unknown): Buffer => new KeyBuilder().value(v, dir).build();
      for (let i = 0; i < values.length - 1; i++) {
        const c = Buffer.compare(encoded(byCompare[i]), encoded(byCompare[i + 1]));
        const expected = Math.sign(dir * compareValues(byCompare[i], byCompare[i + 1]));
        expect(c, `${String(byCompare[i])} vs ${String(byCompare[i + 1])} (dir ${dir})`).to.equal(expected);
      }
    }
  });
});

function ids(docs: Document[]): string[] {
  return docs.map((d) => d._id);
}
