import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { EmbeddedDocumentStore } from '../../src/infra/docstore/embedded/embedded-document-store.js';
import type { DocumentStore, WriteOp, WriteOptions } from '../../src/infra/docstore/port.js';
import { EmbeddedEventStore } from '../../src/infra/eventstore/embedded/embedded-event-store.js';
import type { Projection } from '../../src/projections/projection.js';
import { PROGRESS_FLOOR, ProjectionRunner } from '../../src/projections/runner.js';
import { Metrics } from '../../src/infra/metrics/metrics.js';
import { waitFor } from '../support/sandbox.js';

const logger = pino({ level: 'silent' });

/** Counts the batches that reach the store, by the collections they touch. */
function counting(docs: DocumentStore) {
  const batches: string[][] = [];
  const store = Object.create(docs) as DocumentStore;
  store.batch = (ops: WriteOp[], options?: WriteOptions) => {
    batches.push(ops.map((op) => op.collection));
    return docs.batch(ops, options);
  };
  return { store, batches };
}

/**
 * Counts ticks into one document, keyed by event id so a reread changes nothing. A tick is a
 * stored event type whose data is empty (the runner hands projections only the log's own types).
 */
const TICK = 'WebhookCleared';
const ticks: Projection = {
  name: 'ticks',
  eventTypes: new Set([TICK]),
  apply: (event) => [{ collection: 'ticks', op: 'replaceOne', filter: { _id: event.id }, doc: { _id: event.id }, upsert: true }],
};
/** Reads an event type these tests never append: it only ever moves its checkpoint. */
const idle: Projection = { name: 'idle', eventTypes: new Set(['SubscriptionResumed']), apply: () => [] };

describe('ProjectionRunner', () => {
  let dir: string;
  let events: EmbeddedEventStore;
  let docs: EmbeddedDocumentStore;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'runner-'));
    events = await EmbeddedEventStore.open({ path: join(dir, 'events') });
    docs = await EmbeddedDocumentStore.open({ path: join(dir, 'docs') });
  });

  afterEach(async () => {
    await events.close();
    await docs.close();
    await rm(dir, { recursive: true, force: true });
  });

  const tick = (stream: string) => events.append(stream, [{ id: randomUUID(), type: TICK, data: {}, metadata: {} }], 'any');
  /** Thirty ticks, one batch each: each is committed before the next is appended. The last one's position. */
  const tickOneByOne = async (runner: ProjectionRunner) => {
    let head = 0n;
    for (let i = 0; i < 30; i++) {
      head = (await tick(`s-${i % 3}`)).position;
      expect(await runner.waitFor(head, ['ticks', 'idle'], 5000)).to.equal(true);
    }
    return head;
  };
  const checkpoint = async (name: string) => (await docs.collection<{ _id: string; position: string }>('checkpoints').findOne({ _id: name }))?.position;

  it('moves a projection that changes nothing without a write per batch, and saves where it is on stop', async () => {
    const { store, batches } = counting(docs);
    const runner = new ProjectionRunner(events, store, [ticks, idle], logger);
    const started = Date.now();
    await runner.start();
    const head = await tickOneByOne(runner);
    // Without names it waits for every projection; none passes a position not yet written.
    expect(await runner.waitFor(head, undefined, 5000)).to.equal(true);
    expect(await runner.waitFor(head + 1n, undefined, 100)).to.equal(false);
    const idleBatches = batches.filter((b) => b.length === 1 && b[0] === 'checkpoints').length;
    const elapsedMs = Date.now() - started;
    const tickBatches = batches.filter((b) => b.includes('ticks')).length;
    expect(tickBatches).to.equal(30);
    // The first batch writes the idle checkpoint; later ones only once a second has passed. The
    // 30 rounds take seconds on a loaded CI box, so the allowance grows with the time they took
    // (one spare); a write per batch would be 30.
    expect(idleBatches).to.be.at.most(2 + Math.floor(elapsedMs / 1000));
    expect(runner.position('idle')).to.equal(head);
    await runner.stop();
    expect(await checkpoint('idle')).to.equal(head.toString());
    expect(await checkpoint('ticks')).to.equal(head.toString());
  });

  it('with shared progress, stores the floor every projection passed instead of a checkpoint per batch for one that changed nothing', async () => {
    const written: string[] = [];
    const store = Object.create(docs) as DocumentStore;
    store.batch = (ops: WriteOp[], options?: WriteOptions) => {
      for (const op of ops) if (op.collection === 'checkpoints' && op.op === 'replaceOne') written.push(String(op.filter._id));
      return docs.batch(ops, options);
    };
    const runner = new ProjectionRunner(events, store, [ticks, idle], logger, { sharedProgress: true });
    const started = Date.now();
    await runner.start();
    const head = await tickOneByOne(runner);
    // What another node reads: the floor reaches the head though `idle` wrote its own seldom.
    await waitFor(async () => (await checkpoint(PROGRESS_FLOOR)) === head.toString(), 'the floor at the head');
    const elapsedMs = Date.now() - started;
    expect(written.filter((id) => id === 'ticks')).to.have.length(30);
    expect(written.filter((id) => id === 'idle').length).to.be.at.most(2 + Math.floor(elapsedMs / 1000));
    expect(written.filter((id) => id === PROGRESS_FLOOR).length).to.be.within(1, 30);
    await runner.stop();
  });

  it('after a crash (no stop), rereads from the stored checkpoints and reaches the same read model', async () => {
    // A crash: from then on the first runner writes nothing (it is abandoned, and keeps failing).
    let crashed = false;
    const dying = Object.create(docs) as DocumentStore;
    dying.batch = (ops: WriteOp[], options?: WriteOptions) => (crashed ? Promise.reject(new Error('crashed')) : docs.batch(ops, options));
    const first = new ProjectionRunner(events, dying, [ticks, idle], logger);
    await first.start();
    let head = 0n;
    for (let i = 0; i < 20; i++) head = (await tick('s')).position;
    expect(await first.waitFor(head, ['ticks', 'idle'], 5000)).to.equal(true);
    crashed = true;
    const storedIdle = BigInt((await checkpoint('idle')) ?? '-1');
    const second = new ProjectionRunner(events, docs, [ticks, idle], logger);
    await second.start();
    expect(second.position('idle')).to.equal(storedIdle);
    for (let i = 0; i < 5; i++) head = (await tick('s')).position;
    expect(await second.waitFor(head, ['ticks', 'idle'], 5000)).to.equal(true);
    expect(await docs.collection('ticks').count()).to.equal(25);
    await second.stop();
    await first.stop();
  });

  it('before an event that reads, commits what came before it and moves its position with it', async () => {
    // Both in one batch: the runner starts after they are stored.
    const written = (await tick('s')).position;
    await tick('reads');
    const seen: { position: bigint; ticks: number }[] = [];
    let runner: ProjectionRunner | undefined;
    const reader: Projection = {
      ...ticks,
      name: 'reader',
      reading: {
        needs: (event) => event.streamId === 'reads',
        async apply(event, read) {
          // A reader keyed on the position (the chat count) must not see the commit under the old one.
          seen.push({ position: (runner as ProjectionRunner).position('reader'), ticks: (await read('ticks', {})).length });
          return ticks.apply(event);
        },
      },
    };
    runner = new ProjectionRunner(events, docs, [reader], logger);
    await runner.start();
    const head = await events.headPosition();
    expect(await runner.waitFor(head, ['reader'], 5000)).to.equal(true);
    expect(seen).to.deep.equal([{ position: written, ticks: 1 }]);
    expect(await docs.collection('ticks').count()).to.equal(2);
    await runner.stop();
  });

  it('changes its read version before a write lands and again after, so nothing keyed on it outlives the write', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let writing = false;
    const slow = Object.create(docs) as DocumentStore;
    slow.batch = async (ops: WriteOp[], options?: WriteOptions) => {
      writing = true;
      await docs.batch(ops, options);
      // Readable now, and the runner not yet told: a reader in this window must see a new version.
      await gate;
    };
    const runner = new ProjectionRunner(events, slow, [ticks], logger);
    await runner.start();
    const idleVersion = runner.readVersion('ticks');
    const head = (await tick('s')).position;
    while (!writing) await new Promise((r) => setTimeout(r, 5));
    const during = runner.readVersion('ticks');
    expect(during).to.not.equal(idleVersion);
    release();
    expect(await runner.waitFor(head, ['ticks'], 5000)).to.equal(true);
    expect(runner.readVersion('ticks')).to.not.equal(during);
    await runner.stop();
  });

  it('tells a projection of each commit once it is in the store, and of no commit that failed', async () => {
    const told: bigint[] = [];
    const stored: bigint[] = [];
    let failures = 1;
    const store = Object.create(docs) as DocumentStore;
    store.batch = async (ops: WriteOp[], options?: WriteOptions) => {
      if (ops.some((op) => op.collection === 'ticks') && failures-- > 0) throw new Error('disk full');
      await docs.batch(ops, options);
      const saved = ops.find((op) => op.collection === 'checkpoints' && op.op === 'replaceOne');
      if (saved && saved.op === 'replaceOne') stored.push(BigInt(String(saved.doc.position)));
    };
    const noting: Projection = { ...ticks, name: 'noting', committed: (position) => told.push(position) };
    const runner = new ProjectionRunner(events, store, [noting], logger);
    await runner.start();
    let head = 0n;
    for (let i = 0; i < 3; i++) head = (await tick('s')).position;
    expect(await runner.waitFor(head, ['noting'], 5000)).to.equal(true);
    await runner.stop();
    // The failed batch was retried (after RETRY_MS); only positions actually stored were told.
    expect(told.length).to.be.greaterThan(0);
    expect(told[told.length - 1]).to.equal(head);
    for (const position of told) expect(stored).to.include(position);
    expect([...told].sort((a, b) => (a < b ? -1 : 1))).to.deep.equal(told);
  });

  it('tells a projection of no commit of a batch it ignored entirely, yet moves its position and checkpoint past it', async () => {
    const told: bigint[] = [];
    const noting: Projection = { ...ticks, name: 'noting', committed: (position) => told.push(position) };
    const runner = new ProjectionRunner(events, docs, [noting], logger);
    await runner.start();
    const folded = (await tick('s')).position;
    expect(await runner.waitFor(folded, ['noting'], 5000)).to.equal(true);
    let head = folded;
    for (let i = 0; i < 5; i++) {
      // One batch each, none of the projection's type: its reactor would wake for nothing.
      head = (await events.append('other', [{ id: randomUUID(), type: 'SubscriptionResumed', data: {}, metadata: {} }], 'any')).position;
      expect(await runner.waitFor(head, ['noting'], 5000)).to.equal(true);
    }
    const last = (await tick('s')).position;
    expect(await runner.waitFor(last, ['noting'], 5000)).to.equal(true);
    await runner.stop();
    expect(told).to.deep.equal([folded, last]);
    expect(await checkpoint('noting')).to.equal(String(last));
  });

  it('still tells of a commit whose batch folded an event, and a restart from the stored checkpoint rereads nothing it ignored', async () => {
    const told: bigint[] = [];
    const noting: Projection = { ...ticks, name: 'noting', committed: (position) => told.push(position) };
    const first = new ProjectionRunner(events, docs, [noting], logger);
    await first.start();
    let head = 0n;
    for (let i = 0; i < 3; i++) head = (await events.append('other', [{ id: randomUUID(), type: 'SubscriptionResumed', data: {}, metadata: {} }], 'any')).position;
    expect(await first.waitFor(head, ['noting'], 5000)).to.equal(true);
    await first.stop();
    expect(told).to.deep.equal([]);
    expect(await checkpoint('noting')).to.equal(String(head));
    const again = new ProjectionRunner(events, docs, [noting], logger);
    await again.start();
    const folded = (await tick('s')).position;
    expect(await again.waitFor(folded, ['noting'], 5000)).to.equal(true);
    await again.stop();
    expect(told).to.deep.equal([folded]);
    expect(await docs.collection('ticks').find({})).to.have.length(1);
  });

  it('writes a batch as the projection compacts it, and each event as it is where writes are idempotent per event', async () => {
    const counter: Projection = {
      name: 'counter',
      eventTypes: new Set([TICK]),
      apply: () => [{ collection: 'counts', op: 'updateOne', filter: { _id: 'n' }, update: { $inc: { n: 1 } }, upsert: true }],
      // Adds up the batch's increments of the one document.
      compact: (ops) => [{ collection: 'counts', op: 'updateOne', filter: { _id: 'n' }, update: { $inc: { n: ops.length } }, upsert: true }],
    };
    for (const idempotentWrites of [false, true]) {
      const { store, batches } = counting(docs);
      const runner = new ProjectionRunner(events, store, [{ ...counter, name: `counter-${idempotentWrites}` }], logger, { idempotentWrites });
      // Appended before the runner starts: one batch.
      let head = 0n;
      for (let i = 0; i < 5; i++) head = (await tick('s')).position;
      await runner.start();
      expect(await runner.waitFor(head, undefined, 5000)).to.equal(true);
      await runner.stop();
      const written = batches.filter((b) => b.includes('counts'));
      const counts = written.map((b) => b.filter((c) => c === 'counts').length);
      // Idempotent: every event's write stays its own (10 events by then), each conditioned on its position.
      if (idempotentWrites) expect(counts).to.have.length(1).and.satisfy((c: number[]) => (c[0] as number) >= 10);
      else expect(counts).to.deep.equal([1]);
    }
    expect((await docs.collection<{ _id: string; n: number }>('counts').findOne({ _id: 'n' }))?.n).to.equal(15);
  });

  it("counts each projection's batches, events folded and ignored, writes and busy time on the gateway's /metrics", async () => {
    const metrics = new Metrics();
    const runner = new ProjectionRunner(events, docs, [ticks, idle], logger, { meter: metrics.work });
    await runner.start();
    let head = 0n;
    for (let i = 0; i < 3; i++) {
      head = (await tick('s')).position;
      expect(await runner.waitFor(head, undefined, 5000)).to.equal(true);
    }
    await runner.stop();
    const text = await metrics.text();
    const value = (series: string) => Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1]);
    expect(value('gateway_projection_events_total{projection="ticks",outcome="folded"}')).to.equal(3);
    expect(value('gateway_projection_events_total{projection="idle",outcome="ignored"}')).to.equal(3);
    expect(value('gateway_projection_batches_total{projection="idle",outcome="ignored"}')).to.equal(3);
    expect(value('gateway_projection_batches_total{projection="ticks",outcome="folded"}')).to.equal(3);
    // Three read-model batches, each with its checkpoint.
    expect(value('gateway_projection_writes_total{projection="ticks",unit="batches"}')).to.equal(3);
    expect(value('gateway_projection_writes_total{projection="ticks",unit="ops"}')).to.equal(6);
    expect(value('gateway_projection_busy_seconds_total{projection="ticks",phase="write"}')).to.be.greaterThan(0);
    expect(value('gateway_projection_busy_seconds_total{projection="ticks",phase="fold"}')).to.be.greaterThan(0);
  });

  it('reports a stored event whose data does not match its schema, skips it, and goes on', async () => {
    const reported: unknown[] = [];
    const watching = pino({ level: 'error' }, { write: (line: string) => reported.push(JSON.parse(line)) });
    const connected: Projection = {
      name: 'connected',
      eventTypes: new Set(['SessionConnected']),
      // Typed: `data.phone` is a string here without a cast, because the runner checked it.
      apply: (event) => (event.type === 'SessionConnected' ? [{ collection: 'phones', op: 'replaceOne', filter: { _id: event.id }, doc: { _id: event.id, phone: event.data.phone }, upsert: true }] : []),
    };
    const runner = new ProjectionRunner(events, docs, [connected], watching);
    await runner.start();
    const connect = (data: Record<string, unknown>) => events.append('session-I', [{ id: randomUUID(), type: 'SessionConnected', data, metadata: {} }], 'any');
    await connect({ jid: 'j', phone: 42, business: false });
    const head = (await connect({ jid: 'j', phone: '15550001', business: false })).position;
    expect(await runner.waitFor(head, ['connected'], 5000)).to.equal(true);
    await runner.stop();
    expect((await docs.collection('phones').find({})).map((d) => d.phone)).to.deep.equal(['15550001']);
    expect(reported).to.have.length(1);
    expect(reported[0]).to.deep.include({ msg: 'malformed stored event skipped', projection: 'connected', type: 'SessionConnected', streamId: 'session-I' });
    expect((reported[0] as { reason: string }).reason).to.match(/phone/);
  });
});
