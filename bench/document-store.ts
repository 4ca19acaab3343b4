import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { randomUUID } from 'node:crypto';
import { EventStoreDBClient, START, excludeSystemEvents } from '@eventstore/db-client';
import { MongoClient } from 'mongodb';
import { pino } from 'pino';
import { typedEvent } from '../src/domain/recorded.js';
import { EmbeddedDocumentStore } from '../src/infra/docstore/embedded/embedded-document-store.js';
import { MongoDocumentStore } from '../src/infra/docstore/mongodb/mongodb-document-store.js';
import { toBulkOperation } from '../src/infra/docstore/mongodb/write-models.js';
import type { Document, WriteOp } from '../src/infra/docstore/port.js';
import { toRecorded } from '../src/infra/eventstore/esdb/codec.js';
import { EsdbEventStore } from '../src/infra/eventstore/esdb/esdb-event-store.js';
import type { EventData } from '../src/infra/eventstore/port.js';
import { chatsProjection } from '../src/projections/chats/chats-projection.js';
import { ProjectionRunner } from '../src/projections/runner.js';
import { idempotentWrites } from '../src/projections/idempotent-writes.js';
import { startEventStoreTestServer } from '../test/servers/eventstore/server.js';
import { startMongoTestServer } from '../test/servers/mongodb/server.js';
import { median, percentile, report } from './lib.js';

/**
 * The chat list query (one instance's chats, pinned first then most recent, a page of 50, plus the
 * total) over 10,000 chats, against the same query done by sorting a plain in-memory array.
 */

interface Chat extends Document {
  instanceId: string;
  pinned: boolean;
  lastMessageTs: number;
  name: string;
  unreadCount: number;
  archived: boolean;
  lastMessage: { fromMe: boolean; text: string };
}

const DOCS = 10_000;
const PAGE = 50;
const WARMUP = 50;
const RUNS = 500;
/** The product target for a chat list request. */
const TARGET_P99_MS = 20;
/** The store's own budget for the indexed find, leaving the rest of the request room. */
const FIND_TARGET_P99_MS = 5;
const INSTANCE = 'instance-bench';
const SORT = { pinned: -1, lastMessageTs: -1 } as const;

export async function benchDocumentStore(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'docstore-bench-'));
  const store = await EmbeddedDocumentStore.open({ path: dir });
  try {
    const chats = store.collection<Chat>('chats');
    await chats.createIndex({ name: 'chats_order', keys: { instanceId: 1, pinned: -1, lastMessageTs: -1 } });
    const docs = makeChats();
    for (let i = 0; i < docs.length; i += 1000) {
      await store.batch(docs.slice(i, i + 1000).map((doc) => ({ collection: 'chats', op: 'insertOne' as const, doc })));
    }

    for (const skip of [0, DOCS - PAGE]) {
      const stored = await measure(async () => {
        await chats.find({ instanceId: INSTANCE }, { sort: SORT, skip, limit: PAGE });
        await chats.count({ instanceId: INSTANCE });
      });
      const inMemory = await measure(async () => {
        const mine = docs.filter((d) => d.instanceId === INSTANCE);
        mine.sort((a, b) => Number(b.pinned) - Number(a.pinned) || b.lastMessageTs - a.lastMessageTs);
        mine.slice(skip, skip + PAGE);
      });
      const name = `docstore chat page skip ${skip} limit ${PAGE} + count (${DOCS.toLocaleString('en-US')} docs)`;
      const baseline = 'in-memory array filter+sort+slice';
      report({ name: `${name} p50`, value: stored.p50, unit: 'ms', baseline: { name: `${baseline} p50`, value: inMemory.p50 } });
      report({
        name: `${name} p99`,
        value: stored.p99,
        unit: 'ms',
        baseline: { name: `${baseline} p99`, value: inMemory.p99 },
        target: `< ${TARGET_P99_MS} ms`,
        met: stored.p99 < TARGET_P99_MS,
      });
      report({ name: `${name} throughput`, value: stored.opsPerSecond, unit: 'ops/s', baseline: { name: baseline, value: inMemory.opsPerSecond } });
      const findOnly = await measure(async () => {
        await chats.find({ instanceId: INSTANCE }, { sort: SORT, skip, limit: PAGE });
      });
      report({
        name: `docstore find alone skip ${skip} limit ${PAGE} p99`,
        value: findOnly.p99,
        unit: 'ms',
        baseline: { name: `${baseline} p99`, value: inMemory.p99 },
        target: `< ${FIND_TARGET_P99_MS} ms`,
        met: findOnly.p99 < FIND_TARGET_P99_MS,
      });
    }
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
  await benchMongoAdapter();
  await benchProjectionOverTestServers();
}

/** Fewer documents and runs over the test server: it scans, and only the adapter's share is measured. */
const MONGO_DOCS = 2_000;
const MONGO_RUNS = 200;
const PROJECTION_BATCH = 100;

/**
 * The MongoDB adapter's own cost: the same calls through the adapter and through the bare driver,
 * both over the wire-protocol test server in this process. The server's time is in both, so the
 * ratio is an upper bound on what the adapter adds (argument copies, error mapping, bookkeeping);
 * these are not figures for a real MongoDB.
 */
export async function benchMongoAdapter(): Promise<void> {
  const server = await startMongoTestServer();
  const store = await MongoDocumentStore.open({ url: server.urlFor('bench_adapter') });
  const client = new MongoClient(server.urlFor('bench_driver'), { promoteBuffers: true });
  await client.connect();
  try {
    const raw = client.db().collection<{ _id: string; unreadCount?: number; archived?: boolean }>('chats');
    const chats = store.collection<Chat>('chats');
    const docs = makeChats().slice(0, MONGO_DOCS);
    await store.batch(docs.map((doc) => ({ collection: 'chats', op: 'insertOne' as const, doc })));
    await raw.insertMany(docs.map((d) => ({ ...d })));
    const over = `over the test server, ${MONGO_DOCS.toLocaleString('en-US')} docs`;

    const page = await measurePair(
      async () => void (await chats.find({ instanceId: INSTANCE }, { sort: SORT, limit: PAGE })),
      async () => void (await raw.find({ instanceId: INSTANCE }, { sort: SORT, limit: PAGE }).toArray()),
    );
    report({ name: `mongodb adapter chat page find p50 ${over}`, value: page.adapter.p50, unit: 'ms', baseline: { name: 'bare driver p50', value: page.driver.p50 } });

    let n = 0;
    const next = (): string => (docs[n++ % MONGO_DOCS] as Chat)._id;
    const update = await measurePair(
      async () => void (await chats.updateOne({ _id: next() }, { $inc: { unreadCount: 1 } })),
      async () => void (await raw.updateOne({ _id: next() }, { $inc: { unreadCount: 1 } })),
    );
    report({ name: `mongodb adapter updateOne p50 ${over}`, value: update.adapter.p50, unit: 'ms', baseline: { name: 'bare driver p50', value: update.driver.p50 } });

    // A projection batch: many small updates, then the checkpoint, as the runner writes them.
    const ids = (i: number): string[] => Array.from({ length: PROJECTION_BATCH }, (_, k) => (docs[(i * PROJECTION_BATCH + k) % MONGO_DOCS] as Chat)._id);
    let b = 0;
    const checkpoints = client.db().collection<{ _id: string; position: string }>('checkpoints');
    const batch = await measurePair(
      async () => {
        const i = b++;
        await store.batch([
          ...ids(i).map((_id, k): WriteOp => ({ collection: 'chats', op: 'updateOne', filter: { _id }, update: { $set: { archived: k % 2 === i % 2 } } })),
          { collection: 'checkpoints', op: 'replaceOne', filter: { _id: 'bench' }, doc: { _id: 'bench', position: String(i) }, upsert: true },
        ]);
      },
      async () => {
        const i = b++;
        await raw.bulkWrite(ids(i).map((_id, k) => ({ updateOne: { filter: { _id }, update: { $set: { archived: k % 2 === i % 2 } } } })), { ordered: true });
        await checkpoints.replaceOne({ _id: 'bench' }, { position: String(i) }, { upsert: true });
      },
      MONGO_RUNS / 4,
    );
    report({
      name: `mongodb adapter projection batch (${PROJECTION_BATCH} updates + checkpoint) p50 ${over}`,
      value: batch.adapter.p50,
      unit: 'ms',
      baseline: { name: 'bare driver bulkWrite + replaceOne p50', value: batch.driver.p50 },
    });
    report({
      name: `mongodb adapter projection writes ${over}`,
      value: (batch.adapter.opsPerSecond * (PROJECTION_BATCH + 1)),
      unit: 'writes/s',
      baseline: { name: 'bare driver', value: batch.driver.opsPerSecond * (PROJECTION_BATCH + 1) },
    });

    // What idempotence by log position adds on our side: the rewrite of each batch, and the writes
    // sent (an upsert becomes two). Timed on the test server the conditional filters would measure
    // its matcher (mingo compiles each one), which a real server's _id index does not pay.
    const projectionOps = (i: number): WriteOp[] =>
      ids(i).map((_id, k): WriteOp => ({ collection: 'chats', op: 'updateOne', filter: { _id }, update: { $inc: { unreadCount: 1 }, $setOnInsert: { archived: k % 2 === 0 } }, upsert: true }));
    const plain = projectionOps(0);
    const t0 = performance.now();
    let sent = 0;
    for (let i = 0; i < MONGO_RUNS; i++) sent = idempotentWrites('bench', BigInt(i), plain).length;
    const rewriteMs = (performance.now() - t0) / MONGO_RUNS;
    report({ name: `idempotent projection writes: rewrite of a batch of ${PROJECTION_BATCH} upserts`, value: rewriteMs, unit: 'ms' });
    report({ name: `idempotent projection writes: writes sent for ${PROJECTION_BATCH} upserts`, value: sent, unit: 'writes', baseline: { name: 'unguarded', value: plain.length } });
  } finally {
    await client.close();
    await store.close();
    await server.close();
  }
}

type Timing = { p50: number; p99: number; opsPerSecond: number };

/** The two alternate call by call, so drift in a shared machine's load hits both alike. */
async function measurePair(adapter: () => Promise<void>, driver: () => Promise<void>, runs = MONGO_RUNS): Promise<{ adapter: Timing; driver: Timing }> {
  for (let i = 0; i < WARMUP; i++) {
    await adapter();
    await driver();
  }
  const times: [number[], number[]] = [[], []];
  for (let i = 0; i < RUNS; i++) {
    for (const [k, op] of [adapter, driver].entries()) {
      const t0 = performance.now();
      await op();
      (times[k] as number[]).push(performance.now() - t0);
    }
  }
  const timing = (list: number[]): Timing => {
    const total = list.reduce((a, t) => a + t, 0);
    list.sort((a, b) => a - b);
    return { p50: percentile(list, 50), p99: percentile(list, 99), opsPerSecond: (list.length * 1000) / total };
  };
  return { adapter: timing(times[0]), driver: timing(times[1]) };
}

async function measure(op: () => Promise<void>): Promise<{ p50: number; p99: number; opsPerSecond: number }> {
  for (let i = 0; i < WARMUP; i++) await op();
  const times: number[] = [];
  const start = performance.now();
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await op();
    times.push(performance.now() - t0);
  }
  const elapsed = performance.now() - start;
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99), opsPerSecond: (RUNS * 1000) / elapsed };
}

function makeChats(): Chat[] {
  const base = Date.UTC(2025, 0, 1);
  return Array.from({ length: DOCS }, (_, i) => ({
    _id: `${INSTANCE}:${String(i).padStart(5, '0')}@s.whatsapp.net`,
    instanceId: INSTANCE,
    pinned: i % 97 === 0,
    // A scrambled but collision-free order, so the index order differs from insertion order.
    lastMessageTs: base + ((i * 7919) % DOCS) * 1000,
    name: `Contact ${i}`,
    unreadCount: i % 13,
    archived: i % 31 === 0,
    lastMessage: { fromMe: i % 2 === 0, text: `message number ${i} with some typical length text` },
  }));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await benchDocumentStore();
}

/** Events the projection measurements fold: one instance's chat traffic over 200 chats. */
const PROJECTION_EVENTS = 5_000;
const PROJECTION_INSTANCE = '3EBENCHPROJECTION0000000000000';

/** A received text message as the session drivers record it (it passes the domain's schema). */
function receivedEvent(i: number): EventData {
  const chat = `55119${String(i % 200).padStart(8, '0')}@s.whatsapp.net`;
  const message = { id: `M${i}`, chat, sender: chat, from_me: false, is_group: false, push_name: 'Bench Contact', timestamp_s: 1_893_456_000 + i, type: 'text', text: 'Hello, this is a benchmark message of a typical chat length.' };
  return {
    id: randomUUID(),
    type: 'MessageReceived',
    data: { message, upsert: 'notify' },
    metadata: { instanceId: PROJECTION_INSTANCE, occurredAt: new Date().toISOString(), correlationId: randomUUID(), actor: { kind: 'network', id: 'sandbox' } },
  };
}

/**
 * The projection path over both test servers: the chats projection run by the gateway's
 * ProjectionRunner on the EventStoreDB and MongoDB adapters (catch-up subscription, idempotent
 * writes, checkpoint), against the same work done on the bare clients: the client's own
 * subscribeToAll and the driver's bulkWrite of the same (idempotent) writes per 500 events.
 * The baseline shares the adapters' event decoding and write translation, so the ratio is what
 * the subscription wrapper, the runner and the document store adapter add. Both servers run in
 * this process, so these are not figures for real servers.
 */
export async function benchProjectionOverTestServers(): Promise<void> {
  const esdb = await startEventStoreTestServer();
  const mongo = await startMongoTestServer();
  try {
    const filler = await EsdbEventStore.open({ url: esdb.url });
    try {
      for (let i = 0; i < PROJECTION_EVENTS; i += 500) {
        await filler.append(`session-${PROJECTION_INSTANCE}`, Array.from({ length: 500 }, (_, k) => receivedEvent(i + k)), 'any');
      }
    } finally {
      await filler.close();
    }
    // Alternating, each on a fresh database, so warm-up and the machine's load hit both alike.
    const adapterRates: number[] = [];
    const rawRates: number[] = [];
    for (let round = 0; round < 3; round++) {
      const adapterFirst = round % 2 === 0;
      if (adapterFirst) adapterRates.push(await runnerRate(esdb.url, mongo.urlFor(`bench_projection_adapters_${round}`)));
      rawRates.push(await rawProjectionRate(esdb.url, mongo.urlFor(`bench_projection_raw_${round}`)));
      if (!adapterFirst) adapterRates.push(await runnerRate(esdb.url, mongo.urlFor(`bench_projection_adapters_${round}`)));
    }
    console.log(`  (rounds: adapters ${adapterRates.map(Math.round).join(', ')}; bare clients ${rawRates.map(Math.round).join(', ')} events/s)`);
    const adapters = median(adapterRates);
    const raw = median(rawRates);
    report({
      name: `chats projection over the test servers (runner on the EventStoreDB and MongoDB adapters), ${PROJECTION_EVENTS.toLocaleString('en-US')} events`,
      value: adapters,
      unit: 'events/s',
      baseline: { name: 'bare client subscribeToAll + driver bulkWrite of the same writes', value: raw },
    });
  } finally {
    await mongo.close();
    await esdb.close();
  }
}

async function runnerRate(esdbUrl: string, mongoUrl: string): Promise<number> {
  const events = await EsdbEventStore.open({ url: esdbUrl });
  const docs = await MongoDocumentStore.open({ url: mongoUrl });
  const runner = new ProjectionRunner(events, docs, [chatsProjection], pino({ level: 'warn' }), { idempotentWrites: true });
  try {
    const head = await events.headPosition();
    const started = performance.now();
    await runner.start();
    if (!(await runner.waitFor(head, undefined, 300_000))) throw new Error('the chats projection did not catch up');
    const rate = PROJECTION_EVENTS / ((performance.now() - started) / 1000);
    await expectChats(docs);
    return rate;
  } finally {
    await runner.stop();
    await docs.close();
    await events.close();
  }
}

async function rawProjectionRate(esdbUrl: string, mongoUrl: string): Promise<number> {
  // The indexes the projection declares, made through the adapter before the clock starts.
  const setupStore = await MongoDocumentStore.open({ url: mongoUrl });
  await chatsProjection.setup?.(setupStore);
  await setupStore.close();
  const client = EventStoreDBClient.connectionString(esdbUrl);
  const driver = new MongoClient(mongoUrl);
  await driver.connect();
  try {
    const db = driver.db();
    const started = performance.now();
    let seen = 0;
    let ops: WriteOp[] = [];
    let last = -1n;
    const commit = async () => {
      const writes = [...ops, { collection: 'checkpoints', op: 'replaceOne' as const, filter: { _id: 'chats' }, doc: { _id: 'chats', position: last.toString() }, upsert: true }];
      ops = [];
      // One bulkWrite per collection in order, as the adapter does.
      for (let i = 0; i < writes.length; ) {
        const collection = (writes[i] as WriteOp).collection;
        let j = i;
        while (j < writes.length && (writes[j] as WriteOp).collection === collection) j++;
        await db.collection<Document>(collection).bulkWrite(writes.slice(i, j).map(toBulkOperation), { ordered: true });
        i = j;
      }
    };
    const subscription = client.subscribeToAll({ fromPosition: START, filter: excludeSystemEvents() });
    let inBatch = 0;
    for await (const resolved of subscription) {
      const recorded = toRecorded(resolved);
      if (!recorded) continue;
      seen++;
      inBatch++;
      last = recorded.position;
      const typed = typedEvent(recorded);
      if (typed.ok && chatsProjection.eventTypes.has(typed.event.type)) ops.push(...idempotentWrites('chats', recorded.position, chatsProjection.apply(typed.event)));
      if (inBatch === 500 || seen === PROJECTION_EVENTS) {
        await commit();
        inBatch = 0;
      }
      if (seen === PROJECTION_EVENTS) break;
    }
    await subscription.unsubscribe();
    const rate = PROJECTION_EVENTS / ((performance.now() - started) / 1000);
    const chats = await db.collection('chats').countDocuments();
    if (chats !== 200) throw new Error(`expected 200 chats, found ${chats}`);
    return rate;
  } finally {
    await driver.close();
    await client.dispose();
  }
}

/** Both paths must have folded every message: 200 chats of 25 messages each. */
async function expectChats(docs: MongoDocumentStore): Promise<void> {
  const chats = await docs.collection('chats').count();
  if (chats !== 200) throw new Error(`expected 200 chats, found ${chats}`);
}
