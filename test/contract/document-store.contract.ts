import { expect } from 'chai';
import { DuplicateKeyError, type Collection, type Document, type DocumentStore, type Filter, type FindOptions, type Update, type UpdateResult, type WriteOp } from '../../src/infra/docstore/port.js';

/**
 * The DocumentStore contract. Uses only the port, and asserts only what MongoDB itself does, so
 * every adapter (embedded LMDB + mingo, MongoDB over the wire) must pass it unchanged.
 */
export function documentStoreContract(
  adapterName: string,
  factory: () => Promise<{ store: DocumentStore; cleanup(): Promise<void> }>,
): void {
  describe(`DocumentStore contract: ${adapterName}`, function () {
    let store: DocumentStore;
    let cleanup: () => Promise<void>;

    beforeEach(async () => {
      ({ store, cleanup } = await factory());
    });

    afterEach(async () => {
      await cleanup();
    });

    const people = (): Document[] => [
      { _id: 'p1', name: 'Ana', age: 30, tags: ['a', 'b'], address: { city: 'Lisbon', zip: '1000' }, active: true, scores: [{ k: 'x', v: 5 }, { k: 'y', v: 9 }] },
      { _id: 'p2', name: 'bob', age: 25, tags: ['b'], address: { city: 'Porto' }, active: false, scores: [{ k: 'x', v: 1 }] },
      { _id: 'p3', name: 'Carla', age: 35, tags: [], active: true, nickname: null },
      { _id: 'p4', name: 'dan', age: 41, address: { city: 'Lisbon' } },
    ];

    async function seeded(name = 'people', docs = people()): Promise<Collection> {
      const col = store.collection(name);
      for (const doc of docs) await col.insertOne(doc);
      return col;
    }

    describe('documents', () => {
      it('creates collections lazily: an unknown collection is empty', async () => {
        const col = store.collection('never_written');
        expect(await col.find({})).to.deep.equal([]);
        expect(await col.findOne({ _id: 'x' })).to.equal(null);
        expect(await col.count()).to.equal(0);
      });

      it('round-trips nested objects, arrays, booleans, null, numbers, strings and dates', async () => {
        const doc = { _id: 'd1', s: 'text', n: -12.5, i: 7, b: false, z: null, a: [1, 'two', { three: 3 }], o: { p: { q: [true] } }, at: new Date('2024-05-01T10:00:00.000Z') };
        const col = store.collection('things');
        await col.insertOne(doc);
        expect(await col.findOne({ _id: 'd1' })).to.deep.equal(doc);
      });

      it('returns copies: mutating a result or the inserted object never changes the store', async () => {
        const col = store.collection('things');
        const doc = { _id: 'd1', list: [1], inner: { v: 1 } };
        await col.insertOne(doc);
        doc.list.push(2);
        doc.inner.v = 2;
        const found = (await col.findOne({ _id: 'd1' })) as Document & { list: number[] };
        found.list.push(3);
        const [listed] = (await col.find({})) as Array<Document & { inner: { v: number } }>;
        (listed as { inner: { v: number } }).inner.v = 9;
        expect(await col.findOne({ _id: 'd1' })).to.deep.equal({ _id: 'd1', list: [1], inner: { v: 1 } });
      });

      it('writes what it was handed: changing the objects before the write lands changes nothing', async () => {
        const col = store.collection('things');
        const doc = { _id: 'd1', tags: ['a'], inner: { at: new Date('2024-05-01T10:00:00.000Z'), bytes: Buffer.from([1, 2]) } };
        const insert = col.insertOne(doc);
        doc.tags.push('changed');
        doc.inner.at.setTime(0);
        (doc.inner.bytes as Buffer)[0] = 9;
        await insert;
        const update = { $set: { 'inner.n': 1 } };
        const filter = { _id: { $regex: /^d1$/ } };
        const ops: WriteOp[] = [{ collection: 'things', op: 'updateOne', filter, update }];
        const pending = store.batch(ops);
        update.$set['inner.n'] = 2;
        filter._id.$regex = /^nothing$/;
        await pending;
        const found = (await col.findOne({ _id: 'd1' })) as Document & { inner: { at: Date; bytes: Uint8Array; n: number } };
        expect(found.tags).to.deep.equal(['a']);
        expect(found.inner.at.toISOString()).to.equal('2024-05-01T10:00:00.000Z');
        expect([...found.inner.bytes]).to.deep.equal([1, 2]);
        expect(found.inner.n).to.equal(1);
      });

      it('rejects an insert with an existing _id with DuplicateKeyError and keeps the first document', async () => {
        const col = store.collection('things');
        await col.insertOne({ _id: 'd1', v: 1 });
        const error = await rejection(col.insertOne({ _id: 'd1', v: 2 }));
        expect(error).to.be.instanceOf(DuplicateKeyError);
        expect((error as DuplicateKeyError).collection).to.equal('things');
        expect(await col.findOne({ _id: 'd1' })).to.deep.equal({ _id: 'd1', v: 1 });
      });

      it('insertMany inserts in order, indexed and unique-checked like insertOne, and serves them as copies', async () => {
        const col = store.collection('people');
        await col.createIndex({ name: 'by_city', keys: { 'address.city': 1, age: -1 } });
        await col.createIndex({ name: 'by_name', keys: { name: 1 }, unique: true });
        const docs = people();
        await col.insertMany(docs);
        expect(await col.find({}, { sort: { _id: 1 } })).to.deep.equal(people());
        expect(ids(await col.find({ 'address.city': 'Lisbon' }, { sort: { age: -1 } }))).to.deep.equal(['p4', 'p1']);
        (docs[0] as Document & { age: number }).age = 99;
        const [found] = (await col.find({ _id: 'p1' })) as Array<Document & { age: number }>;
        expect(found?.age).to.equal(30);
        // A later update moves its index entries as it would for an insertOne's document.
        await col.updateOne({ _id: 'p2' }, { $set: { 'address.city': 'Lisbon' } });
        expect(ids(await col.find({ 'address.city': 'Lisbon' }, { sort: { age: -1 } }))).to.deep.equal(['p4', 'p1', 'p2']);
        await col.insertMany([]);
        expect(await col.count()).to.equal(4);
      });

      it('insertMany refuses an existing _id or a unique key with DuplicateKeyError, the first documents kept', async () => {
        const col = store.collection('people');
        await col.createIndex({ name: 'by_name', keys: { name: 1 }, unique: true });
        await col.insertOne({ _id: 'p1', name: 'Ana' });
        const again = await rejection(col.insertMany([{ _id: 'p1', name: 'Other' }]));
        expect(again).to.be.instanceOf(DuplicateKeyError);
        const sameName = await rejection(col.insertMany([{ _id: 'p9', name: 'Ana' }]));
        expect(sameName).to.be.instanceOf(DuplicateKeyError);
        expect(await col.find({})).to.deep.equal([{ _id: 'p1', name: 'Ana' }]);
      });

      it('keeps collections apart: the same _id may exist in two collections', async () => {
        await store.collection('a').insertOne({ _id: 'same', from: 'a' });
        await store.collection('b').insertOne({ _id: 'same', from: 'b' });
        expect(await store.collection('a').findOne({ _id: 'same' })).to.deep.equal({ _id: 'same', from: 'a' });
        expect(await store.collection('b').count()).to.equal(1);
      });
    });

    describe('find filters (MongoDB semantics)', () => {
      const cases: Array<[string, Filter, string[]]> = [
        ['implicit equality', { age: 30 }, ['p1']],
        ['$eq', { age: { $eq: 30 } }, ['p1']],
        ['$ne (also matches a missing field)', { active: { $ne: true } }, ['p2', 'p4']],
        ['$gt', { age: { $gt: 30 } }, ['p3', 'p4']],
        ['$gte', { age: { $gte: 30 } }, ['p1', 'p3', 'p4']],
        ['$lt', { age: { $lt: 30 } }, ['p2']],
        ['$lte', { age: { $lte: 30 } }, ['p1', 'p2']],
        ['$in', { age: { $in: [25, 41, 99] } }, ['p2', 'p4']],
        ['$nin', { age: { $in: [25, 41] }, name: { $nin: ['dan'] } }, ['p2']],
        ['$exists true', { nickname: { $exists: true } }, ['p3']],
        ['$exists false', { address: { $exists: false } }, ['p3']],
        ['null matches null and missing', { nickname: null }, ['p1', 'p2', 'p3', 'p4']],
        ['$regex', { name: { $regex: '^b' } }, ['p2']],
        ['$regex with $options i', { name: { $regex: '^B', $options: 'i' } }, ['p2']],
        ['regular expression literal', { name: /^c/i }, ['p3']],
        ['equality on an array field matches an element', { tags: 'b' }, ['p1', 'p2']],
        ['dotted path into an object', { 'address.city': 'Lisbon' }, ['p1', 'p4']],
        ['dotted path through an array of objects', { 'scores.v': 9 }, ['p1']],
        ['several fields are ANDed', { active: true, 'address.city': 'Lisbon' }, ['p1']],
        ['$and', { $and: [{ active: true }, { age: { $gt: 30 } }] }, ['p3']],
        ['$or', { $or: [{ age: 25 }, { name: 'dan' }] }, ['p2', 'p4']],
        ['$not', { age: { $not: { $gt: 30 } } }, ['p1', 'p2']],
        ['$elemMatch', { scores: { $elemMatch: { k: 'x', v: { $gt: 2 } } } }, ['p1']],
        ['empty filter', {}, ['p1', 'p2', 'p3', 'p4']],
      ];
      for (const [title, filter, expected] of cases) {
        it(title, async () => {
          const col = await seeded();
          expect(ids(await col.find(filter)).sort()).to.deep.equal(expected);
          expect(await col.count(filter)).to.equal(expected.length);
        });
      }

      it('findOne returns a matching document or null', async () => {
        const col = await seeded();
        expect(await col.findOne({ name: 'dan' })).to.deep.equal(people()[3]);
        expect(await col.findOne({ name: 'nobody' })).to.equal(null);
      });
    });

    describe('sort, skip, limit', () => {
      const sorted = async (options: FindOptions): Promise<string[]> => ids(await (await seeded()).find({}, options));

      it('sorts on several fields', async () => {
        expect(await sorted({ sort: { active: -1, age: 1 } })).to.deep.equal(['p1', 'p3', 'p2', 'p4']);
      });

      it('sorts strings by binary order (upper case before lower case)', async () => {
        expect(await sorted({ sort: { name: 1 } })).to.deep.equal(['p1', 'p3', 'p2', 'p4']);
      });

      it('pages by _id ranges: $gt, $gte, $lt, $lte in either direction, with other conditions, and non-ASCII ids', async () => {
        const ids = ['a', 'a0', 'a1', 'b', 'b\u00e9', 'b\u{1F600}', 'b\uFFFD', 'c', 'Z', '~'];
        const col = await seeded('ranged', ids.map((_id, n) => ({ _id, n })));
        const byCode = (xs: string[]) => [...xs].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
        const pageIds = async (filter: Filter, options: FindOptions) => (await col.find(filter, options)).map((d) => d._id);
        expect(await pageIds({ _id: { $gt: 'a0' } }, { sort: { _id: 1 }, limit: 3 })).to.deep.equal(['a1', 'b', 'b\u00e9']);
        // Strings order as MongoDB orders them: by their UTF-8 bytes.
        expect(await pageIds({ _id: { $gte: 'a1', $lt: 'c' } }, { sort: { _id: 1 } })).to.deep.equal(byCode(['a1', 'b', 'b\u00e9', 'b\u{1F600}', 'b\uFFFD']));
        expect(await pageIds({ _id: { $lte: 'b' } }, { sort: { _id: -1 }, limit: 2 })).to.deep.equal(['b', 'a1']);
        expect(await pageIds({ _id: { $gt: 'a', $lte: 'b' }, n: { $gte: 2 } }, { sort: { _id: 1 } })).to.deep.equal(['a1', 'b']);
        expect(await pageIds({ _id: { $gt: 'b' } }, { sort: { _id: 1 } })).to.deep.equal(byCode(['b\u00e9', 'b\u{1F600}', 'b\uFFFD', 'c', '~']));
        expect(await pageIds({ _id: { $gt: 'b\u00e9' } }, { sort: { _id: 1 } })).to.deep.equal(byCode(['b\u{1F600}', 'b\uFFFD', 'c', '~']));
        expect(await pageIds({ _id: { $lt: 'A' } }, { sort: { _id: 1 } })).to.deep.equal([]);
        expect(await col.count({ _id: { $gte: 'a', $lt: 'b' } })).to.equal(3);
      });

      it('sorts on a dotted path, missing values first', async () => {
        expect(await sorted({ sort: { 'address.city': 1, _id: 1 } })).to.deep.equal(['p3', 'p1', 'p4', 'p2']);
      });

      it('orders mixed types as MongoDB does: null/missing < numbers < strings < objects < booleans', async () => {
        const col = await seeded('mixed', [
          { _id: 'm1', v: 'str' },
          { _id: 'm2', v: 10 },
          { _id: 'm3' },
          { _id: 'm4', v: null },
          { _id: 'm5', v: true },
          { _id: 'm6', v: { a: 1 } },
          { _id: 'm7', v: -5 },
          { _id: 'm8', v: 'abc' },
        ]);
        expect(ids(await col.find({}, { sort: { v: 1, _id: 1 } }))).to.deep.equal(['m3', 'm4', 'm7', 'm2', 'm8', 'm1', 'm6', 'm5']);
        expect(ids(await col.find({}, { sort: { v: -1, _id: 1 } }))).to.deep.equal(['m5', 'm6', 'm1', 'm8', 'm2', 'm7', 'm3', 'm4']);
      });

      it('sorts an array field by its smallest element ascending and its largest descending', async () => {
        const col = await seeded('arrays', [
          { _id: 'a1', v: [1, 10] },
          { _id: 'a2', v: 5 },
          { _id: 'a3', v: [3] },
        ]);
        expect(ids(await col.find({}, { sort: { v: 1 } }))).to.deep.equal(['a1', 'a3', 'a2']);
        expect(ids(await col.find({}, { sort: { v: -1 } }))).to.deep.equal(['a1', 'a2', 'a3']);
      });

      it('skips and limits after sorting; limit 0 means no limit', async () => {
        const col = await seeded();
        expect(ids(await col.find({}, { sort: { age: 1 }, skip: 1, limit: 2 }))).to.deep.equal(['p1', 'p3']);
        expect(ids(await col.find({}, { sort: { age: -1 }, limit: 0 }))).to.deep.equal(['p4', 'p3', 'p1', 'p2']);
        expect(await col.find({}, { sort: { age: 1 }, skip: 10 })).to.deep.equal([]);
      });
    });

    describe('replaceOne', () => {
      it('replaces the whole document', async () => {
        const col = await seeded();
        const result = await col.replaceOne({ name: 'bob' }, { _id: 'p2', name: 'Bobby' });
        expectResult(result, 1, 1);
        expect(await col.findOne({ _id: 'p2' })).to.deep.equal({ _id: 'p2', name: 'Bobby' });
      });

      it('reports modifiedCount 0 for an identical replacement', async () => {
        const col = store.collection('things');
        await col.insertOne({ _id: 'r1', a: 1, b: { c: [1, 2] } });
        expectResult(await col.replaceOne({ _id: 'r1' }, { _id: 'r1', a: 1, b: { c: [1, 2] } }), 1, 0);
      });

      it('does nothing without a match unless upsert', async () => {
        const col = await seeded();
        expectResult(await col.replaceOne({ _id: 'n1' }, { _id: 'n1', name: 'New' }), 0, 0);
        expect(await col.count()).to.equal(4);
        const result = await col.replaceOne({ _id: 'n1' }, { _id: 'n1', name: 'New' }, { upsert: true });
        expectResult(result, 0, 0, 'n1');
        expect(await col.findOne({ _id: 'n1' })).to.deep.equal({ _id: 'n1', name: 'New' });
      });

      it('rejects a replacement that would change _id', async () => {
        const col = await seeded();
        await rejection(col.replaceOne({ _id: 'p1' }, { _id: 'other', name: 'x' }));
        expect(await col.findOne({ _id: 'p1' })).to.deep.equal(people()[0]);
      });
    });

    describe('updateOne / updateMany operators', () => {
      let nextId = 0;
      async function updated(update: Update): Promise<{ result: UpdateResult; doc: Document | null }> {
        const col = store.collection('updates');
        const _id = `u${nextId++}`;
        await col.insertOne({ _id, n: 1, tags: ['a', 'b'], nested: { x: 1 }, items: [{ k: 'x', v: 1 }, { k: 'y', v: 7 }] });
        const result = await col.updateOne({ _id }, update);
        return { result, doc: await col.findOne({ _id }) };
      }

      it('$set sets fields and creates nested objects along dotted paths', async () => {
        const { result, doc } = await updated({ $set: { n: 2, 'profile.lang.primary': 'pt', 'nested.y': 2 } });
        expectResult(result, 1, 1);
        expect(doc).to.deep.include({ n: 2, profile: { lang: { primary: 'pt' } }, nested: { x: 1, y: 2 } });
      });

      it('$set to the current value matches but modifies nothing', async () => {
        const { result } = await updated({ $set: { n: 1, nested: { x: 1 } } });
        expectResult(result, 1, 0);
      });

      it('$unset removes fields; unsetting a missing field modifies nothing', async () => {
        expect((await updated({ $unset: { nested: '' } })).doc).to.not.have.property('nested');
        expectResult((await updated({ $unset: { missing: '' } })).result, 1, 0);
      });

      it('$inc adds to a number and creates a missing field', async () => {
        const { doc } = await updated({ $inc: { n: 5, 'counters.seen': -2 } });
        expect(doc).to.deep.include({ n: 6, counters: { seen: -2 } });
      });

      it('$push appends one value or several with $each, creating the array', async () => {
        const { doc } = await updated({ $push: { tags: { $each: ['c', 'a'] }, fresh: 1 } });
        expect(doc).to.deep.include({ tags: ['a', 'b', 'c', 'a'], fresh: [1] });
      });

      it('$addToSet adds only absent values, also with $each', async () => {
        const { doc } = await updated({ $addToSet: { tags: { $each: ['b', 'c', 'c'] } } });
        expect(doc).to.deep.include({ tags: ['a', 'b', 'c'] });
        expectResult((await updated({ $addToSet: { tags: 'a' } })).result, 1, 0);
      });

      it('$pull removes values and elements matching a condition', async () => {
        const { doc } = await updated({ $pull: { tags: 'a', items: { v: { $gte: 5 } } } });
        expect(doc).to.deep.include({ tags: ['b'], items: [{ k: 'x', v: 1 }] });
      });

      it('$max and $min replace only when the new value is beyond the current one', async () => {
        const { result, doc } = await updated({ $max: { n: 10, top: 3 }, $min: { 'nested.x': 0 } });
        expectResult(result, 1, 1);
        expect(doc).to.deep.include({ n: 10, top: 3, nested: { x: 0 } });
        expectResult((await updated({ $max: { n: 0 }, $min: { 'nested.x': 5 } })).result, 1, 0);
      });

      it('ignores $setOnInsert when the update matches', async () => {
        const { doc } = await updated({ $setOnInsert: { created: true }, $set: { n: 3 } });
        expect(doc).to.not.have.property('created');
        expect(doc).to.deep.include({ n: 3 });
      });

      it('leaves a matched document alone when the update is $setOnInsert only (matched, not modified)', async () => {
        const { result, doc } = await updated({ $setOnInsert: { created: true, n: 99 } });
        expectResult(result, 1, 0);
        expect(doc).to.not.have.property('created');
        expect(doc).to.deep.include({ n: 1 });
      });

      it('updateOne changes only one of several matches; without a match it reports zeros', async () => {
        const col = await seeded();
        expectResult(await col.updateOne({ active: true }, { $set: { flag: 1 } }), 1, 1);
        expect(await col.count({ flag: 1 })).to.equal(1);
        expectResult(await col.updateOne({ name: 'nobody' }, { $set: { flag: 1 } }), 0, 0);
        expect(await col.count()).to.equal(4);
      });

      it('updateMany counts matched and actually modified documents', async () => {
        const col = await seeded();
        await col.updateOne({ _id: 'p1' }, { $set: { level: 2 } });
        expectResult(await col.updateMany({ active: true }, { $set: { level: 2 } }), 2, 1);
        expectResult(await col.updateMany({ 'address.city': 'Lisbon' }, { $inc: { age: 1 } }), 2, 2);
        expect(ids(await col.find({ age: { $in: [31, 42] } })).sort()).to.deep.equal(['p1', 'p4']);
      });

      it('rejects an update without operators and an update of _id', async () => {
        const col = await seeded();
        await rejection(col.updateOne({ _id: 'p1' }, { name: { first: 'x' } }));
        await rejection(col.updateOne({ _id: 'p1' }, { $set: { _id: 'p9' } }));
        expect(await col.findOne({ _id: 'p1' })).to.deep.equal(people()[0]);
      });
    });

    describe('upsert', () => {
      it('inserts the filter equalities, then $setOnInsert and the other operators, under a new string _id', async () => {
        const col = store.collection('chats');
        const result = await col.updateOne(
          { instanceId: 'i1', chatId: { $eq: 'c9' }, 'owner.kind': 'user', score: { $gt: 5 }, $and: [{ channel: 'wa' }] },
          { $set: { name: 'x' }, $setOnInsert: { createdAt: 1 }, $inc: { count: 1 } },
          { upsert: true },
        );
        expect(result.matchedCount).to.equal(0);
        expect(result.modifiedCount).to.equal(0);
        expect(result.upsertedId).to.be.a('string').and.not.equal('');
        const doc = await col.findOne({ _id: result.upsertedId });
        expect(doc).to.deep.equal({
          _id: result.upsertedId,
          instanceId: 'i1',
          chatId: 'c9',
          owner: { kind: 'user' },
          channel: 'wa',
          name: 'x',
          createdAt: 1,
          count: 1,
        });
      });

      it('takes _id from $setOnInsert when the filter has none', async () => {
        const col = store.collection('accounts');
        const update = { $setOnInsert: { _id: 'acc-1' }, $set: { seen: true } };
        expectResult(await col.updateOne({ email: 'a@example.com' }, update, { upsert: true }), 0, 0, 'acc-1');
        expectResult(await col.updateOne({ email: 'a@example.com' }, update, { upsert: true }), 1, 0);
        expect(await col.find({})).to.deep.equal([{ _id: 'acc-1', email: 'a@example.com', seen: true }]);
      });

      it('takes _id from the filter, and a second upsert updates without $setOnInsert', async () => {
        const col = store.collection('chats');
        const update = { $setOnInsert: { createdAt: 1 }, $inc: { count: 1 } };
        expectResult(await col.updateOne({ _id: 'u1' }, update, { upsert: true }), 0, 0, 'u1');
        await col.updateOne({ _id: 'u1' }, { $set: { createdAt: 5 } });
        expectResult(await col.updateOne({ _id: 'u1' }, update, { upsert: true }), 1, 1);
        expect(await col.findOne({ _id: 'u1' })).to.deep.equal({ _id: 'u1', createdAt: 5, count: 2 });
      });
    });

    describe('delete', () => {
      it('deleteOne removes one match, deleteMany all, both return the count', async () => {
        const col = await seeded();
        expect(await col.deleteOne({ active: true })).to.equal(1);
        expect(await col.count({ active: true })).to.equal(1);
        expect(await col.deleteMany({ age: { $gte: 25 } })).to.equal(3);
        expect(await col.count()).to.equal(0);
        expect(await col.deleteOne({ _id: 'p1' })).to.equal(0);
        expect(await col.deleteMany({})).to.equal(0);
      });
    });

    describe('indexes', () => {
      it('createIndex is idempotent; reusing a name for other keys rejects', async () => {
        const col = await seeded();
        await col.createIndex({ name: 'by_age', keys: { age: 1 } });
        await col.createIndex({ name: 'by_age', keys: { age: 1 } });
        await rejection(col.createIndex({ name: 'by_age', keys: { name: 1 } }));
        expect(ids(await col.find({ age: 35 }))).to.deep.equal(['p3']);
      });

      it('enforces a unique index on insert, update, replace and upsert, changing nothing', async () => {
        const col = await seeded();
        await col.createIndex({ name: 'uniq_name', keys: { name: 1 }, unique: true });
        expect(await rejection(col.insertOne({ _id: 'p5', name: 'Ana' }))).to.be.instanceOf(DuplicateKeyError);
        expect(await rejection(col.updateOne({ _id: 'p2' }, { $set: { name: 'Ana' } }))).to.be.instanceOf(DuplicateKeyError);
        expect(await rejection(col.replaceOne({ _id: 'p3' }, { _id: 'p3', name: 'dan' }))).to.be.instanceOf(DuplicateKeyError);
        expect(await rejection(col.updateOne({ _id: 'p9' }, { $set: { name: 'bob' } }, { upsert: true }))).to.be.instanceOf(DuplicateKeyError);
        expect(await col.find({}, { sort: { _id: 1 } })).to.deep.equal(people());
        await col.updateOne({ _id: 'p2' }, { $set: { name: 'Bob' } });
        await col.insertOne({ _id: 'p5', name: 'bob' });
        expect(await col.count()).to.equal(5);
      });

      it('treats a missing uniquely indexed field as null: a second document without it collides', async () => {
        const col = store.collection('users');
        await col.createIndex({ name: 'uniq_email', keys: { email: 1 }, unique: true });
        await col.insertOne({ _id: 'a' });
        expect(await rejection(col.insertOne({ _id: 'b' }))).to.be.instanceOf(DuplicateKeyError);
        await col.insertOne({ _id: 'c', email: 'c@example.com' });
        expect(await col.count()).to.equal(2);
      });

      it('enforces a compound unique index on the combination only', async () => {
        const col = store.collection('chats');
        await col.createIndex({ name: 'uniq_chat', keys: { instanceId: 1, chatId: 1 }, unique: true });
        await col.insertOne({ _id: '1', instanceId: 'i1', chatId: 'c1' });
        await col.insertOne({ _id: '2', instanceId: 'i2', chatId: 'c1' });
        expect(await rejection(col.insertOne({ _id: '3', instanceId: 'i1', chatId: 'c1' }))).to.be.instanceOf(DuplicateKeyError);
      });

      it('refuses to create a unique index over existing duplicates, leaving no index behind', async () => {
        const col = await seeded();
        await col.insertOne({ _id: 'p5', name: 'Ana' });
        expect(await rejection(col.createIndex({ name: 'uniq_name', keys: { name: 1 }, unique: true }))).to.be.instanceOf(DuplicateKeyError);
        await col.insertOne({ _id: 'p6', name: 'Ana' });
        expect(await col.count({ name: 'Ana' })).to.equal(3);
      });

      it('keeps indexes current through updates, replacements, deletes and batches', async () => {
        const col = await seeded();
        await col.createIndex({ name: 'by_city', keys: { 'address.city': 1, age: -1 } });
        await col.updateOne({ _id: 'p2' }, { $set: { 'address.city': 'Lisbon' } });
        await col.replaceOne({ _id: 'p3' }, { _id: 'p3', address: { city: 'Lisbon' }, age: 50 });
        await col.deleteOne({ _id: 'p4' });
        await store.batch([
          { collection: 'people', op: 'insertOne', doc: { _id: 'p7', address: { city: 'Lisbon' }, age: 1 } },
          { collection: 'people', op: 'updateOne', filter: { _id: 'p1' }, update: { $set: { 'address.city': 'Faro' } } },
        ]);
        expect(ids(await col.find({ 'address.city': 'Lisbon' }, { sort: { age: -1 } }))).to.deep.equal(['p3', 'p2', 'p7']);
        expect(await col.count({ 'address.city': 'Lisbon' })).to.equal(3);
        expect(ids(await col.find({ 'address.city': 'Faro' }))).to.deep.equal(['p1']);
        expect(await col.count({ 'address.city': 'Porto' })).to.equal(0);
      });

      it('answers indexed queries exactly like an unindexed scan', async () => {
        const col = store.collection('chats');
        await col.createIndex({ name: 'chats_order', keys: { instanceId: 1, pinned: -1, lastMessageTs: -1 } });
        const docs = chats(300);
        await store.batch(docs.map((doc) => ({ collection: 'chats', op: 'insertOne' as const, doc })));
        const byOrder = (a: ChatDoc, b: ChatDoc): number =>
          Number(b.pinned) - Number(a.pinned) || b.lastMessageTs - a.lastMessageTs || (a._id < b._id ? -1 : 1);
        for (const instanceId of ['i0', 'i1', 'i2']) {
          const expected = docs.filter((d) => d.instanceId === instanceId).sort(byOrder).map((d) => d._id);
          const sort = { pinned: -1, lastMessageTs: -1, _id: 1 } as const;
          expect(ids(await col.find({ instanceId }, { sort }))).to.deep.equal(expected);
          expect(ids(await col.find({ instanceId }, { sort, skip: 10, limit: 7 }))).to.deep.equal(expected.slice(10, 17));
          expect(ids(await col.find({ instanceId }, { sort: { pinned: 1, lastMessageTs: 1, _id: -1 }, limit: 5 }))).to.deep.equal(
            [...expected].reverse().slice(0, 5),
          );
          expect(await col.count({ instanceId })).to.equal(expected.length);
          expect(await col.count({ instanceId, pinned: true })).to.equal(docs.filter((d) => d.instanceId === instanceId && d.pinned).length);
          const named = docs.filter((d) => d.instanceId === instanceId && d.name.endsWith('7')).sort(byOrder).map((d) => d._id);
          expect(ids(await col.find({ instanceId, name: { $regex: '7$' } }, { sort, limit: 3 }))).to.deep.equal(named.slice(0, 3));
        }
        const both = docs.filter((d) => d.instanceId !== 'i1').sort(byOrder).map((d) => d._id);
        expect(ids(await col.find({ instanceId: { $in: ['i0', 'i2'] } }, { sort: { pinned: -1, lastMessageTs: -1, _id: 1 } }))).to.deep.equal(both);
        expect(await col.count({ instanceId: { $in: ['i0', 'i2'] } })).to.equal(both.length);
        expect(await col.count({ lastMessageTs: { $gte: 1000 } })).to.equal(docs.filter((d) => d.lastMessageTs >= 1000).length);
      });

      it('answers through a partial index exactly as without it, as documents move in and out of its filter', async () => {
        const plain = await seeded('plain');
        const partial = await seeded('partial');
        await partial.createIndex({ name: 'active_by_age', keys: { age: 1 }, partialFilterExpression: { active: true } });
        await partial.createIndex({ name: 'adults_by_name', keys: { name: 1 }, partialFilterExpression: { age: { $gte: 30 }, name: { $type: 'string' } } });
        const change = async (update: (c: Collection) => Promise<unknown>) => Promise.all([update(plain), update(partial)]);
        const same = async (filter: Filter, options?: FindOptions) => {
          expect(ids(await partial.find(filter, options)), JSON.stringify(filter)).to.deep.equal(ids(await plain.find(filter, options)));
          expect(await partial.count(filter), JSON.stringify(filter)).to.equal(await plain.count(filter));
        };
        const queries: [Filter, FindOptions?][] = [
          [{ active: true }, { sort: { age: 1 } }],
          [{ active: true, age: { $gt: 26 } }],
          [{ active: { $in: [true] }, age: 35 }],
          [{ age: 35 }],
          [{ active: false }],
          [{ name: 'Ana', age: { $gte: 30 } }],
          [{ name: { $in: ['Ana', 'dan'] }, age: { $gte: 31 } }],
          [{ name: 'Ana' }],
        ];
        for (const [filter, options] of queries) await same(filter, options);
        await change((c) => c.updateOne({ _id: 'p2' }, { $set: { active: true, age: 31 } }));
        await change((c) => c.updateOne({ _id: 'p1' }, { $set: { active: false } }));
        await change((c) => c.replaceOne({ _id: 'p4' }, { _id: 'p4', name: 'dan', age: 20, active: true }));
        await change((c) => c.deleteOne({ _id: 'p3' }));
        await change((c) => c.insertOne({ _id: 'p5', name: 7, age: 50, active: true }));
        for (const [filter, options] of queries) await same(filter, options);
        expect(ids(await partial.find({ active: true }, { sort: { age: 1 } }))).to.deep.equal(['p4', 'p2', 'p5']);
      });

      it('keeps a partial unique index unique only among the documents its filter admits', async () => {
        const col = store.collection('hooks');
        await col.createIndex({ name: 'one_live_url', keys: { url: 1 }, unique: true, partialFilterExpression: { live: true } });
        await col.insertOne({ _id: 'a', url: 'https://x', live: true });
        await col.insertOne({ _id: 'b', url: 'https://x', live: false });
        await col.insertOne({ _id: 'c', url: 'https://x' });
        expect(await rejection(col.insertOne({ _id: 'd', url: 'https://x', live: true }))).to.be.instanceOf(DuplicateKeyError);
        expect(await rejection(col.updateOne({ _id: 'b' }, { $set: { live: true } }))).to.be.instanceOf(DuplicateKeyError);
        await col.updateOne({ _id: 'a' }, { $set: { live: false } });
        await col.updateOne({ _id: 'b' }, { $set: { live: true } });
        expect(ids(await col.find({ url: 'https://x', live: true }))).to.deep.equal(['b']);
        // Undefined is stored as null, so it exists as far as the filter is concerned.
        await col.createIndex({ name: 'one_per_kind', keys: { kind: 1 }, unique: true, partialFilterExpression: { tag: { $exists: true } } });
        await col.insertOne({ _id: 'e', kind: 1, tag: undefined });
        expect(await rejection(col.insertOne({ _id: 'f', kind: 1, tag: null }))).to.be.instanceOf(DuplicateKeyError);
        await col.insertOne({ _id: 'g', kind: 1 });
      });

      it('refuses a partial filter MongoDB does not support, creating nothing', async () => {
        const col = await seeded();
        for (const partialFilterExpression of [{ age: { $ne: 3 } }, { age: { $exists: false } }, { name: { $regex: '^A' } }, { $nor: [{ age: 1 }] }]) {
          expect(await rejection(col.createIndex({ name: 'odd', keys: { age: 1 }, partialFilterExpression })), JSON.stringify(partialFilterExpression)).to.be.instanceOf(Error);
        }
        await col.createIndex({ name: 'odd', keys: { age: 1 }, partialFilterExpression: { age: { $gt: 26 } } });
        await col.createIndex({ name: 'odd', keys: { age: 1 }, partialFilterExpression: { age: { $gt: 26 } } });
        await rejection(col.createIndex({ name: 'odd', keys: { age: 1 }, partialFilterExpression: { age: { $gt: 27 } } }));
        expect(ids(await col.find({ age: { $gt: 26 } }, { sort: { age: 1 } }))).to.deep.equal(['p1', 'p3', 'p4']);
      });

      it('drops an index: queries still answer, its name can be reused for other keys', async () => {
        const col = await seeded();
        await col.createIndex({ name: 'by_age', keys: { age: 1 } });
        expect(await col.dropIndex('by_age')).to.equal(true);
        expect(await col.dropIndex('by_age')).to.equal(false);
        await col.updateOne({ _id: 'p2' }, { $set: { age: 36 } });
        await col.createIndex({ name: 'by_age', keys: { age: -1, name: 1 } });
        expect(ids(await col.find({ age: { $gt: 30 } }, { sort: { age: -1 } }))).to.deep.equal(['p4', 'p2', 'p3']);
        await col.createIndex({ name: 'uniq_name', keys: { name: 1 }, unique: true });
        await col.dropIndex('uniq_name');
        await col.insertOne({ _id: 'p5', name: 'Ana' });
        expect(await col.count({ name: 'Ana' })).to.equal(2);
      });

      it('finds array elements through an index on an array field', async () => {
        const col = await seeded();
        await col.createIndex({ name: 'by_tag', keys: { tags: 1 } });
        expect(ids(await col.find({ tags: 'b' })).sort()).to.deep.equal(['p1', 'p2']);
        expect(await col.count({ tags: { $in: ['a', 'b'] } })).to.equal(2);
        expect(ids(await col.find({ tags: { $in: ['a', 'b'] } }, { sort: { _id: -1 } }))).to.deep.equal(['p2', 'p1']);
      });
    });

    describe('text search', () => {
      const notes = (): Document[] => [
        { _id: 'n1', owner: 'a', words: ['cafe', 'com', 'leite'], at: 1 },
        { _id: 'n2', owner: 'a', words: ['cafe', 'preto'], at: 2 },
        { _id: 'n3', owner: 'a', words: ['cha', 'preto'], at: 3 },
        { _id: 'n4', owner: 'b', words: ['cafe', 'preto'], at: 4 },
        { _id: 'n5', owner: 'a', at: 5 },
      ];
      async function indexed(): Promise<Collection> {
        const col = await seeded('notes', notes());
        await col.createIndex({ name: 'words', keys: { owner: 1 }, text: 'words' });
        return col;
      }
      const ids = (docs: Document[]) => docs.map((d) => d._id);

      it('finds documents holding every quoted word, with the other conditions, in the order asked', async () => {
        const col = await indexed();
        expect(ids(await col.find({ owner: 'a', $text: { $search: '"cafe"' } }, { sort: { at: -1 } }))).to.deep.equal(['n2', 'n1']);
        expect(ids(await col.find({ owner: 'a', $text: { $search: '"cafe" "preto"' } }, { sort: { at: -1 } }))).to.deep.equal(['n2']);
        expect(ids(await col.find({ owner: 'a', at: { $gte: 2 }, $text: { $search: '"preto"' } }, { sort: { at: 1 }, limit: 1 }))).to.deep.equal(['n2']);
        expect(await col.count({ owner: 'b', $text: { $search: '"preto"' } })).to.equal(1);
        expect(await col.find({ owner: 'a', $text: { $search: '"caf"' } })).to.deep.equal([]);
      });

      it('finds documents holding any bare word, and keeps the index across a change', async () => {
        const col = await indexed();
        expect(ids(await col.find({ owner: 'a', $text: { $search: 'leite cha' } }, { sort: { at: 1 } }))).to.deep.equal(['n1', 'n3']);
        await col.updateOne({ _id: 'n3' }, { $set: { words: ['cafe'] } });
        expect(ids(await col.find({ owner: 'a', $text: { $search: '"cafe"' } }, { sort: { at: 1 } }))).to.deep.equal(['n1', 'n2', 'n3']);
        await col.createIndex({ name: 'words', keys: { owner: 1 }, text: 'words' });
      });
    });

    describe('grouped indexes and text search in _id order', () => {
      /** What the answer must be: every document tested by hand, sorted by _id. */
      const expected = (docs: Map<string, Document>, test: (d: Document) => boolean, dir: 1 | -1, limit: number) =>
        [...docs.values()]
          .filter(test)
          .map((d) => d._id)
          .sort((a, b) => (a < b ? -dir : a > b ? dir : 0))
          .slice(0, limit);

      it('pages a group newest first by _id, under random inserts, moves, word changes and removals, as a scan would', async () => {
        const col = store.collection('runs');
        await col.createIndex({ name: 'by_chat', keys: { inst: 1, chat: 1 }, grouped: true });
        await col.createIndex({ name: 'words', keys: { inst: 1 }, text: 'words' });
        const docs = new Map<string, Document>();
        let seed = 7;
        const rand = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n);
        const WORDS = ['ola', 'pix', 'boleto', 'zebra', 'frete'];
        const words = () => [...new Set(Array.from({ length: 1 + rand(3) }, () => WORDS[rand(WORDS.length)] as string))];
        // Ids out of order (a message older than those stored) and in bulk, as a history sync brings them.
        const batch: Document[] = [];
        for (let i = 0; i < 600; i++) {
          const id = `i|${String(rand(100_000)).padStart(6, '0')}.${i}`;
          const doc: Document = { _id: id, inst: 'i', chat: `c${rand(3)}`, words: words() };
          batch.push(doc);
          docs.set(id, doc);
        }
        await col.insertMany(batch);
        for (let i = 0; i < 300; i++) {
          const id = `i|${String(rand(100_000)).padStart(6, '0')}.x${i}`;
          const doc: Document = { _id: id, inst: rand(5) === 0 ? 'j' : 'i', chat: `c${rand(3)}`, words: words() };
          await col.insertOne(doc);
          docs.set(id, doc);
        }
        const all = [...docs.keys()];
        for (let i = 0; i < 200; i++) {
          const id = all[rand(all.length)] as string;
          if (!docs.has(id)) continue;
          const r = rand(3);
          if (r === 0) {
            await col.deleteOne({ _id: id });
            docs.delete(id);
          } else if (r === 1) {
            const chat = `c${rand(3)}`;
            await col.updateOne({ _id: id }, { $set: { chat } });
            (docs.get(id) as Document).chat = chat;
          } else {
            const w = words();
            await col.updateOne({ _id: id }, { $set: { words: w } });
            (docs.get(id) as Document).words = w;
          }
        }
        const ids = (found: Document[]) => found.map((d) => d._id);
        for (const chat of ['c0', 'c1', 'c2']) {
          const inChat = (d: Document) => d.inst === 'i' && d.chat === chat;
          expect(ids(await col.find({ inst: 'i', chat }, { sort: { _id: -1 }, limit: 40 }))).to.deep.equal(expected(docs, inChat, -1, 40));
          expect(ids(await col.find({ inst: 'i', chat }, { sort: { _id: 1 }, limit: 1000 }))).to.deep.equal(expected(docs, inChat, 1, 1000));
          const below = expected(docs, inChat, -1, 1000)[25] as string;
          expect(ids(await col.find({ inst: 'i', chat, _id: { $gt: 'i|', $lt: below } }, { sort: { _id: -1 }, limit: 30 }))).to.deep.equal(
            expected(docs, (d) => inChat(d) && d._id < below, -1, 30),
          );
        }
        const has = (d: Document, w: string) => Array.isArray(d.words) && d.words.includes(w);
        expect(ids(await col.find({ inst: 'i', chat: { $in: ['c0', 'c2'] } }, { sort: { _id: -1 }, limit: 50 }))).to.deep.equal(
          expected(docs, (d) => d.inst === 'i' && (d.chat === 'c0' || d.chat === 'c2'), -1, 50),
        );
        expect(ids(await col.find({ inst: 'i', $text: { $search: '"zebra"' } }, { sort: { _id: -1 }, limit: 30 }))).to.deep.equal(expected(docs, (d) => d.inst === 'i' && has(d, 'zebra'), -1, 30));
        expect(ids(await col.find({ inst: 'i', $text: { $search: '"pix" "frete"' } }, { sort: { _id: -1 }, limit: 1000 }))).to.deep.equal(
          expected(docs, (d) => d.inst === 'i' && has(d, 'pix') && has(d, 'frete'), -1, 1000),
        );
        expect(ids(await col.find({ inst: 'i', chat: 'c1', $text: { $search: '"ola"' } }, { sort: { _id: -1 }, limit: 20 }))).to.deep.equal(
          expected(docs, (d) => d.inst === 'i' && d.chat === 'c1' && has(d, 'ola'), -1, 20),
        );
        expect(ids(await col.find({ inst: 'i', $text: { $search: 'boleto zebra' } }, { sort: { _id: 1 }, limit: 1000 }))).to.deep.equal(
          expected(docs, (d) => d.inst === 'i' && (has(d, 'boleto') || has(d, 'zebra')), 1, 1000),
        );
        expect(await col.count({ inst: 'j', chat: 'c1' })).to.equal([...docs.values()].filter((d) => d.inst === 'j' && d.chat === 'c1').length);
        // Declared again as at every start: the same index, nothing rebuilt or refused.
        await col.createIndex({ name: 'by_chat', keys: { inst: 1, chat: 1 }, grouped: true });
      });
    });

    describe('batch', () => {
      it('applies ops in order, each seeing the ones before it', async () => {
        await store.batch([
          { collection: 'b', op: 'insertOne', doc: { _id: 'x', n: 1 } },
          { collection: 'b', op: 'updateOne', filter: { _id: 'x' }, update: { $inc: { n: 1 } } },
          { collection: 'b', op: 'updateOne', filter: { _id: 'y' }, update: { $set: { n: 10 } }, upsert: true },
          { collection: 'b', op: 'replaceOne', filter: { _id: 'z' }, doc: { _id: 'z', n: 0 }, upsert: true },
          { collection: 'b', op: 'updateMany', filter: { n: { $gte: 2 } }, update: { $inc: { n: 100 } } },
          { collection: 'b', op: 'deleteOne', filter: { _id: 'z' } },
          { collection: 'c', op: 'insertOne', doc: { _id: 'x', n: 1 } },
          { collection: 'c', op: 'deleteMany', filter: {} },
        ]);
        expect(await store.collection('b').find({}, { sort: { _id: 1 } })).to.deep.equal([
          { _id: 'x', n: 102 },
          { _id: 'y', n: 110 },
        ]);
        expect(await store.collection('c').count()).to.equal(0);
      });

      it('rejects with DuplicateKeyError when an op violates a unique key', async () => {
        await store.collection('b').insertOne({ _id: 'x' });
        const error = await rejection(store.batch([{ collection: 'b', op: 'insertOne', doc: { _id: 'x' } }]));
        expect(error).to.be.instanceOf(DuplicateKeyError);
      });

      it('flushes: resolves after writes made without durability, and with nothing pending', async () => {
        const col = store.collection('f');
        await col.insertOne({ _id: 'a' });
        const writes = Promise.all([col.insertOne({ _id: 'b' }), store.batch([{ collection: 'f', op: 'insertOne', doc: { _id: 'c' } }])]);
        await writes;
        await store.flush();
        await store.flush();
        expect(await col.count()).to.equal(3);
      });

      it('accepts durable writes', async () => {
        const col = store.collection('d');
        await col.insertOne({ _id: 'a' }, { durable: true });
        await store.batch([{ collection: 'd', op: 'insertOne', doc: { _id: 'b' } }], { durable: true });
        expectResult(await col.updateOne({ _id: 'a' }, { $set: { v: 1 } }, { durable: true }), 1, 1);
        expect(await col.count()).to.equal(2);
      });
    });

    describe('concurrency and lifecycle', () => {
      it('counts every one of 100 concurrent $inc updates', async () => {
        const col = store.collection('counters');
        await col.insertOne({ _id: 'c', n: 0 });
        await Promise.all(Array.from({ length: 100 }, () => col.updateOne({ _id: 'c' }, { $inc: { n: 1 } })));
        expect(await col.findOne({ _id: 'c' })).to.deep.equal({ _id: 'c', n: 100 });
      });

      it('answers ping while open; close waits for pending writes; afterwards operations reject', async () => {
        expect(await store.ping()).to.equal(true);
        const col = store.collection('late');
        const writes = Array.from({ length: 20 }, (_, i) => col.insertOne({ _id: `w${i}` }));
        await store.close();
        const settled = await Promise.allSettled(writes);
        expect(settled.every((s) => s.status === 'fulfilled')).to.equal(true);
        expect(await store.ping()).to.equal(false);
        await rejection(col.find({}));
        await rejection(col.insertOne({ _id: 'after' }));
        await rejection(store.batch([{ collection: 'late', op: 'deleteMany', filter: {} }]));
        // Nothing is left unwritten once closed: a flush that raced the close is answered, not refused.
        await store.flush();
      });
    });
  });
}

interface ChatDoc extends Document {
  instanceId: string;
  pinned: boolean;
  lastMessageTs: number;
  name: string;
}

/** Deterministic chats over three instances, with repeated timestamps so ties need the _id tiebreak. */
function chats(n: number): ChatDoc[] {
  let seed = 42;
  const next = (): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed >>> 16; // the low bits of this generator repeat quickly
  };
  return Array.from({ length: n }, (_, i) => ({
    _id: `chat-${String(i).padStart(4, '0')}`,
    instanceId: `i${next() % 3}`,
    pinned: next() % 7 === 0,
    lastMessageTs: next() % 2000,
    name: `chat ${i}`,
  }));
}

function ids(docs: Document[]): string[] {
  return docs.map((d) => d._id);
}

function expectResult(result: UpdateResult, matched: number, modified: number, upsertedId?: string): void {
  expect({ matched: result.matchedCount, modified: result.modifiedCount, upsertedId: result.upsertedId }).to.deep.equal({ matched, modified, upsertedId });
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the operation to reject');
}
