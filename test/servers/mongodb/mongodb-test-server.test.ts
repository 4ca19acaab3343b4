import { expect } from 'chai';
import { connect } from 'node:net';
import { MongoClient, MongoServerError, type Db } from 'mongodb';
import { startMongoTestServer, type MongoTestServer } from './server.js';
import { freshDatabase } from './targets.js';

/** The test server itself, through the official driver: the commands beyond the adapter's everyday ones. */
describe('MongoDB wire-protocol test server', () => {
  let server: MongoTestServer;
  let client: MongoClient;
  let db: Db;

  before(async () => {
    server = await startMongoTestServer();
    client = new MongoClient(server.url, { serverSelectionTimeoutMS: 2_000 });
    await client.connect();
  });
  after(async () => {
    await client.close();
    await server.close();
  });
  beforeEach(() => (db = client.db(freshDatabase('server'))));

  it('answers the handshake and ping as a standalone, and says so in hello', async () => {
    const hello = await db.command({ hello: 1 });
    expect(hello).to.include({ isWritablePrimary: true, maxWireVersion: 21 });
    expect(hello).to.not.have.property('setName');
    expect(await db.command({ ping: 1 })).to.deep.equal({ ok: 1 });
    expect((await db.admin().buildInfo()).version).to.equal('7.0.0');
  });

  it('serves a find in batches through getMore, and forgets a cursor closed early (killCursors)', async () => {
    const coll = db.collection<{ _id: string; n: number }>('many');
    await coll.insertMany(Array.from({ length: 25 }, (_, n) => ({ _id: `d${String(n).padStart(2, '0')}`, n })));
    const all = await coll.find({ n: { $gte: 5 } }, { batchSize: 4, sort: { n: -1 } }).toArray();
    expect(all.map((d) => d.n)).to.deep.equal(Array.from({ length: 20 }, (_, i) => 24 - i));
    const cursor = coll.find({}, { batchSize: 2 });
    expect((await cursor.next())?._id).to.equal('d00');
    await cursor.close();
    expect(server.commands.slice(-1)[0]?.name).to.equal('killCursors');
    expect(await coll.estimatedDocumentCount()).to.equal(25);
  });

  it('runs findAndModify: update returning the new document, upsert, remove', async () => {
    const coll = db.collection<{ _id: string; n?: number; owner?: string }>('leases');
    const created = await coll.findOneAndUpdate({ _id: 'a' }, { $set: { owner: 'x' }, $inc: { n: 1 } }, { upsert: true, returnDocument: 'after' });
    expect(created).to.deep.equal({ _id: 'a', owner: 'x', n: 1 });
    const before = await coll.findOneAndUpdate({ _id: 'a', owner: 'x' }, { $set: { owner: 'y' } }, { returnDocument: 'before', projection: { owner: 1 } });
    expect(before).to.deep.equal({ _id: 'a', owner: 'x' });
    expect(await coll.findOneAndUpdate({ owner: 'nobody' }, { $set: { n: 9 } })).to.equal(null);
    expect(await coll.findOneAndDelete({ _id: 'a' })).to.deep.equal({ _id: 'a', owner: 'y', n: 1 });
    expect(await coll.countDocuments()).to.equal(0);
  });

  it('applies arrayFilters to the matching array elements only', async () => {
    const coll = db.collection<{ _id: string; items: { k: string; v: number }[] }>('arrays');
    await coll.insertOne({ _id: 'a', items: [{ k: 'x', v: 1 }, { k: 'y', v: 2 }] });
    await coll.updateOne({ _id: 'a' }, { $inc: { 'items.$[it].v': 10 } }, { arrayFilters: [{ 'it.k': 'y' }] });
    expect((await coll.findOne({ _id: 'a' }))?.items).to.deep.equal([{ k: 'x', v: 1 }, { k: 'y', v: 12 }]);
  });

  it('lists and drops indexes, drops collections, and answers the codes mongod answers', async () => {
    const coll = db.collection('indexed');
    await coll.createIndex({ a: 1 }, { name: 'a', unique: true, partialFilterExpression: { live: true } });
    expect(await coll.listIndexes().toArray()).to.deep.equal([
      { v: 2, key: { _id: 1 }, name: '_id_' },
      { v: 2, key: { a: 1 }, name: 'a', unique: true, partialFilterExpression: { live: true } },
    ]);
    const duplicate = await coll.insertMany([{ a: 1, live: true }, { a: 1, live: true }]).catch((e: unknown) => e);
    expect(duplicate).to.have.property('code', 11000);
    await coll.dropIndex('a');
    const missing = await coll.dropIndex('a').catch((e: unknown) => e);
    expect(missing).to.be.instanceOf(MongoServerError).and.have.property('code', 27);
    expect(await coll.drop()).to.equal(true);
    expect(await db.listCollections().toArray()).to.deep.equal([]);
    const unknown = await db.command({ frobnicate: 1 }).catch((e: unknown) => e);
    expect(unknown).to.be.instanceOf(MongoServerError).and.have.property('code', 59);
  });

  it('refuses transactions, as a standalone mongod does', async () => {
    const session = client.startSession();
    try {
      const failed = await session
        .withTransaction(async () => {
          await db.collection('t').insertOne({ _id: 'x' } as never, { session });
        })
        .catch((e: unknown) => e);
      // The driver rewords mongod's "Transaction numbers are only allowed on a replica set member".
      expect(failed).to.be.instanceOf(MongoServerError);
      expect((failed as Error).message).to.match(/does not support/);
      expect(await db.collection('t').countDocuments()).to.equal(0);
    } finally {
      await session.endSession();
    }
  });

  it('drops a connection that sends a frame it cannot read, and keeps serving others', async () => {
    const port = Number(new URL(server.url.replace('mongodb://', 'http://')).port);
    const closed = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => socket.write(Buffer.from([8, 0, 0, 0, 1, 2, 3, 4])));
      socket.on('close', () => resolve(true));
      socket.on('error', () => undefined);
    });
    expect(closed).to.equal(true);
    expect(await db.command({ ping: 1 })).to.deep.equal({ ok: 1 });
  });
});
