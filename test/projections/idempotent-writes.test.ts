import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { MongoDocumentStore } from '../../src/infra/docstore/mongodb/mongodb-document-store.js';
import type { Document, DocumentStore, WriteOp } from '../../src/infra/docstore/port.js';
import { EmbeddedEventStore } from '../../src/infra/eventstore/embedded/embedded-event-store.js';
import type { RecordedEvent as TypedRecordedEvent } from '../../src/domain/recorded.js';
import type { RecordedEvent } from '../../src/infra/eventstore/port.js';
import { appliedMark, idempotentWrites } from '../../src/projections/idempotent-writes.js';
import type { Projection } from '../../src/projections/projection.js';
import { ProjectionRunner } from '../../src/projections/runner.js';
import { startMongoTestServer, type MongoTestServer } from '../servers/mongodb/server.js';
import { freshDatabase } from '../servers/mongodb/targets.js';

/**
 * Every kind of write a projection emits, several on one document within one event, and writes
 * that are not idempotent by themselves ($inc, $push, insertOne).
 */
const tally: Projection = {
  name: 'tally',
  eventTypes: new Set(['Opened', 'Counted', 'Tagged', 'Renamed', 'Closed', 'Reset']),
  apply(typed): WriteOp[] {
    // This vocabulary is the test's own, not the log's: the runner is told to pass it through as is.
    const event = typed as unknown as RecordedEvent;
    const { box, by, tag, name } = event.data as { box: string; by?: number; tag?: string; name?: string };
    switch (event.type) {
      case 'Opened':
        return [
          { collection: 'boxes', op: 'updateOne', filter: { _id: box }, update: { $setOnInsert: { n: 0, tags: [], name: '' } }, upsert: true },
          { collection: 'log', op: 'insertOne', doc: { _id: event.id, box, kind: 'opened' } },
        ];
      case 'Counted':
        return [
          { collection: 'boxes', op: 'updateOne', filter: { _id: box }, update: { $inc: { n: by ?? 1 } } },
          { collection: 'boxes', op: 'updateOne', filter: { _id: box }, update: { $inc: { n: by ?? 1 }, $push: { seen: by ?? 1 } } },
          { collection: 'totals', op: 'updateOne', filter: { _id: 'all' }, update: { $inc: { n: 2 * (by ?? 1) }, $setOnInsert: { since: box } }, upsert: true },
        ];
      case 'Tagged':
        return [
          { collection: 'boxes', op: 'updateOne', filter: { _id: box }, update: { $pull: { tags: tag } } },
          { collection: 'boxes', op: 'updateOne', filter: { _id: box }, update: { $push: { tags: tag } } },
        ];
      case 'Renamed':
        return [
          { collection: 'names', op: 'replaceOne', filter: { _id: box }, doc: { _id: box, name: name ?? '' }, upsert: true },
          { collection: 'boxes', op: 'updateMany', filter: { _id: box }, update: { $set: { name } } },
        ];
      case 'Closed':
        return [{ collection: 'names', op: 'deleteOne', filter: { _id: box } }];
      case 'Reset':
        return [{ collection: 'log', op: 'deleteMany', filter: { box } }];
      default:
        return [];
    }
  },
};

const asIs = (event: RecordedEvent): TypedRecordedEvent => event as unknown as TypedRecordedEvent;

function history(): RecordedEvent[] {
  const data: Array<[string, Record<string, string | number>]> = [
    ['Opened', { box: 'a' }],
    ['Counted', { box: 'a', by: 2 }],
    ['Tagged', { box: 'a', tag: 'x' }],
    ['Renamed', { box: 'a', name: 'first' }],
    ['Opened', { box: 'b' }],
    ['Counted', { box: 'b' }],
    ['Tagged', { box: 'a', tag: 'y' }],
    ['Tagged', { box: 'a', tag: 'x' }],
    ['Closed', { box: 'a' }],
    ['Renamed', { box: 'a', name: 'again' }],
    ['Counted', { box: 'a', by: 5 }],
    ['Reset', { box: 'b' }],
    ['Opened', { box: 'b' }],
  ];
  return data.map(([type, d], i) => ({
    id: `e${i}`,
    type,
    streamId: `box-${String(d.box)}`,
    revision: 0n,
    // Positions of several digits, so a mark compared as text must still order as a number.
    position: BigInt(7 + i * 45),
    data: d,
    metadata: {},
    created: new Date(0),
  }));
}

const writesOf = (events: RecordedEvent[], idempotent: boolean): WriteOp[] =>
  events.flatMap((e) => (idempotent ? idempotentWrites(tally.name, e.position, tally.apply(asIs(e))) : tally.apply(asIs(e))));

async function readModel(store: DocumentStore): Promise<Record<string, Document[]>> {
  const out: Record<string, Document[]> = {};
  for (const name of ['boxes', 'log', 'totals', 'names']) out[name] = await store.collection(name).find({}, { sort: { _id: 1 } });
  return out;
}

describe('idempotent projection writes (MongoDB read models, no transactions)', function () {
  this.timeout(30_000);
  let server: MongoTestServer;
  const opened: MongoDocumentStore[] = [];
  before(async () => (server = await startMongoTestServer()));
  after(async () => {
    await Promise.all(opened.map((s) => s.close()));
    await server.close();
  });
  const newStore = async (): Promise<MongoDocumentStore> => {
    const store = await MongoDocumentStore.open({ url: server.urlFor(freshDatabase('idem')) });
    opened.push(store);
    return store;
  };

  it('orders marks by position, then by the write within the event, as text', () => {
    const marks = [appliedMark(7n, 1), appliedMark(52n, 0), appliedMark(52n, 12), appliedMark(2n ** 64n - 1n, 0)];
    expect([...marks].sort()).to.deep.equal(marks);
    expect(appliedMark(7n, 1) > appliedMark(7n, 0)).to.equal(true);
  });

  it('reaches the same read model when a batch is applied twice, or again after stopping part-way anywhere', async () => {
    const ops = writesOf(history(), true);
    const once = await newStore();
    await once.batch(ops);
    const expected = await readModel(once);
    // b's last write was the second of its Counted event (the sixth): its second Opened found it there.
    expect(expected.boxes).to.deep.include({ _id: 'b', n: 2, tags: [], name: '', seen: [1], _applied: { tally: appliedMark(7n + 5n * 45n, 1) } });
    expect((expected.boxes as Document[])[0]).to.deep.include({ _id: 'a', n: 14, seen: [2, 5], tags: ['y', 'x'], name: 'again' });
    expect(expected.totals).to.deep.equal([{ _id: 'all', n: 16, since: 'a', _applied: { tally: appliedMark(7n + 10n * 45n, 2) } }]);

    const twice = await newStore();
    await twice.batch(ops);
    await twice.batch(ops);
    expect(await readModel(twice)).to.deep.equal(expected);

    for (let cut = 1; cut < ops.length; cut += 3) {
      const crashed = await newStore();
      await crashed.batch(ops.slice(0, cut));
      await crashed.batch(ops);
      expect(await readModel(crashed), `stopped after ${cut} of ${ops.length} writes`).to.deep.equal(expected);
    }
  });

  it('never leaves a document without the fields a unique index needs, between the two writes of an upsert', async () => {
    const store = await newStore();
    await store.collection('accounts').createIndex({ name: 'email', keys: { email: 1 }, unique: true });
    const upsert = (id: string, position: bigint, update: boolean): WriteOp[] =>
      idempotentWrites('accounts', position, [
        update
          ? { collection: 'accounts', op: 'updateOne', filter: { _id: id }, update: { $set: { email: `${id}@example.com` }, $inc: { logins: 1 } }, upsert: true }
          : { collection: 'accounts', op: 'replaceOne', filter: { _id: id }, doc: { _id: id, email: `${id}@example.com`, logins: 0 }, upsert: true },
      ]);
    const ops = [...upsert('a', 1n, false), ...upsert('b', 2n, false), ...upsert('c', 3n, true), ...upsert('d', 4n, true)];
    // A stop right after each document's first write, then the whole batch again.
    for (const cut of [1, 3, 5, 7]) await store.batch(ops.slice(cut - 1, cut));
    await store.batch(ops);
    const stored = await store.collection('accounts').find({}, { sort: { _id: 1 } });
    expect(stored.map((d) => [d._id, d.email, d.logins])).to.deep.equal([
      ['a', 'a@example.com', 0],
      ['b', 'b@example.com', 0],
      ['c', 'c@example.com', 1],
      ['d', 'd@example.com', 1],
    ]);
  });

  it('without them, the same replay counts twice (what the marks prevent)', async () => {
    const counted = history().filter((e) => e.type === 'Counted');
    const total = async (idempotent: boolean): Promise<unknown> => {
      const store = await newStore();
      await store.batch(writesOf(counted, idempotent));
      await store.batch(writesOf(counted, idempotent));
      return (await store.collection('totals').findOne({ _id: 'all' }))?.n;
    };
    expect(await total(false)).to.equal(32);
    expect(await total(true)).to.equal(16);
  });

  it('through the runner: a batch that fails part-way is reread from the checkpoint and counted once', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'idem-runner-'));
    const events = await EmbeddedEventStore.open({ path: join(dir, 'events') });
    const docs = await newStore();
    // Fails once, after writing the first half of a batch: what a crash between writes leaves.
    let failures = 0;
    const flaky = Object.create(docs) as DocumentStore;
    flaky.batch = async (ops, options) => {
      if (failures === 0 && ops.length > 4) {
        failures++;
        await docs.batch(ops.slice(0, Math.floor(ops.length / 2)), options);
        throw new Error('connection lost part-way');
      }
      return docs.batch(ops, options);
    };
    const runner = new ProjectionRunner(events, flaky, [tally], pino({ level: 'silent' }), { idempotentWrites: true, typed: (event) => ({ ok: true, event: event as unknown as TypedRecordedEvent }) });
    try {
      let head = 0n;
      for (const e of history()) {
        head = (await events.append(`box-${String(e.data.box)}`, [{ id: randomUUID(), type: e.type, data: e.data, metadata: {} }], 'any')).position;
      }
      await runner.start();
      expect(await runner.waitFor(head, undefined, 10_000)).to.equal(true);
      expect(failures).to.equal(1);
      const model = await readModel(docs);
      expect(model.totals?.[0]).to.include({ n: 16 });
      expect(model.boxes?.[0]).to.deep.include({ _id: 'a', n: 14, seen: [2, 5], tags: ['y', 'x'], name: 'again' });
      expect(model.names?.map((d) => d.name)).to.deep.equal(['again']);
      expect(await docs.collection('checkpoints').findOne({ _id: 'tally' })).to.deep.equal({ _id: 'tally', position: head.toString() });
    } finally {
      await runner.stop();
      await events.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
