import { expect } from 'chai';
import { MongoDocumentStore } from '../../src/infra/docstore/mongodb/mongodb-document-store.js';
import { DuplicateKeyError } from '../../src/infra/docstore/port.js';
import { startMongoTestServer, type MongoTestServer } from '../servers/mongodb/server.js';
import { freshDatabase, onMongoTargets, testServerTarget, type MongoTarget } from '../servers/mongodb/targets.js';
import { documentStoreContract } from './document-store.contract.js';

/** The DocumentStore contract, unchanged, on the MongoDB adapter: over the test server, and over a real server when one is configured. */
onMongoTargets('document store', documentStoreContract);

/** What the port leaves to each adapter, on the MongoDB one. */
describe('MongoDocumentStore over the wire-protocol test server', () => {
  let target: MongoTarget;
  let store: MongoDocumentStore;
  let database: string;
  before(async () => (target = await testServerTarget()));
  after(async () => target.stop());
  beforeEach(async () => {
    database = freshDatabase('adapter');
    store = await MongoDocumentStore.open({ url: target.url(database) });
  });
  afterEach(async () => store.close());

  const sent = (from: number) => (target.server as MongoTestServer).commands.slice(from).filter((c) => c.db === database);
  const mark = () => (target.server as MongoTestServer).commands.length;

  it('asks for journaled majority writes when durable and on flush, and for nothing more otherwise', async () => {
    const col = store.collection('wc');
    let from = mark();
    await col.insertOne({ _id: 'a' });
    await col.updateOne({ _id: 'a' }, { $set: { v: 1 } });
    await store.batch([{ collection: 'wc', op: 'deleteMany', filter: { v: 2 } }]);
    expect(sent(from).map((c) => c.writeConcern)).to.deep.equal([undefined, undefined, undefined]);

    from = mark();
    await col.insertOne({ _id: 'b' }, { durable: true });
    await store.batch([{ collection: 'wc', op: 'insertOne', doc: { _id: 'c' } }], { durable: true });
    await store.flush();
    expect(sent(from).map((c) => [c.name, c.writeConcern])).to.deep.equal([
      ['insert', { w: 'majority', j: true }],
      ['insert', { w: 'majority', j: true }],
      ['update', { w: 'majority', j: true }],
    ]);
  });

  it('writes a batch as ordered writes, one bulk per run of one collection: a failure keeps what came before', async () => {
    const from = mark();
    const failed = await store
      .batch([
        { collection: 'a', op: 'insertOne', doc: { _id: '1' } },
        { collection: 'a', op: 'updateOne', filter: { _id: '1' }, update: { $set: { v: 1 } } },
        { collection: 'b', op: 'insertOne', doc: { _id: '1' } },
        { collection: 'b', op: 'insertOne', doc: { _id: '1' } },
        { collection: 'c', op: 'insertOne', doc: { _id: '1' } },
      ])
      .catch((e: unknown) => e);
    expect(failed).to.be.instanceOf(DuplicateKeyError);
    expect((failed as DuplicateKeyError).collection).to.equal('b');
    expect(sent(from).map((c) => c.name)).to.deep.equal(['insert', 'update', 'insert']);
    expect(await store.collection('a').findOne({ _id: '1' })).to.deep.equal({ _id: '1', v: 1 });
    expect(await store.collection('b').count()).to.equal(1);
    expect(await store.collection('c').count()).to.equal(0);
  });

  it('answers ping false, soon, when the server is gone', async () => {
    const own = await startMongoTestServer();
    const orphan = await MongoDocumentStore.open({ url: own.url });
    try {
      expect(await orphan.ping()).to.equal(true);
      await own.close();
      const started = Date.now();
      expect(await orphan.ping()).to.equal(false);
      expect(Date.now() - started).to.be.below(3_000);
    } finally {
      await orphan.close();
    }
  });
});
