import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedDocumentStore } from '../../src/infra/docstore/embedded/embedded-document-store.js';
import { pino } from 'pino';
import { DeliveryRepo } from '../../src/webhooks/deliveries/delivery-repo.js';
import { RetentionSweeper } from '../../src/webhooks/deliveries/retention.js';
import { DELIVERIES, HOOKS, ensureDeliveryIndexes, type DeliveryDoc, type DeliveryState } from '../../src/webhooks/deliveries/documents.js';
import { afterAttempt, saveOp } from '../../src/webhooks/deliveries/outcomes.js';

function delivery(instanceId: string, seq: number, state: DeliveryState): DeliveryDoc {
  const retrying = state === 'retrying';
  return {
    _id: `evt_${instanceId}_${String(seq).padStart(4, '0')}`,
    event_id: `e${seq}`,
    instance_id: instanceId,
    seq,
    type: 'Message',
    pos: seq,
    url: 'https://receiver.example/hook',
    host: 'https://receiver.example',
    body: '{}',
    state,
    attempts: state === 'queued' ? 0 : 1,
    last_status_code: null,
    last_error: null,
    created_at: new Date(seq * 1000).toISOString(),
    delivered_at: null,
    next_attempt_at: null,
    due_ms: seq,
    retry_host: retrying ? 'https://receiver.example' : null,
    horizon_from_ms: 0,
  };
}

describe('webhook delivery log indexes', () => {
  let dir: string;
  let docs: EmbeddedDocumentStore;
  let repo: DeliveryRepo;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'delivery-indexes-'));
    docs = await EmbeddedDocumentStore.open({ path: dir });
    repo = new DeliveryRepo(docs);
  });

  afterEach(async () => {
    await docs.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** 40 deliveries of one instance: mostly delivered, a few retrying and failed, the last 8 queued. */
  async function seed(): Promise<DeliveryDoc[]> {
    const states = (seq: number): DeliveryState => (seq > 32 ? 'queued' : seq % 10 === 3 ? 'retrying' : seq % 10 === 7 ? 'failed' : 'delivered');
    const all = Array.from({ length: 40 }, (_, i) => delivery('i1', i + 1, states(i + 1)));
    await docs.batch([...all, delivery('i2', 1, 'queued')].map((d) => saveOp(d, { upsert: true })));
    return all;
  }

  it('replaces the layout of earlier versions and answers every lookup of the log from it', async () => {
    const deliveries = docs.collection(DELIVERIES);
    await deliveries.createIndex({ name: 'lane', keys: { instance_id: 1, state: 1, seq: 1 } });
    await deliveries.createIndex({ name: 'retry_due', keys: { retry_host: 1, due_ms: 1 } });
    await ensureDeliveryIndexes(docs);
    await ensureDeliveryIndexes(docs);
    const all = await seed();
    const seqs = (list: DeliveryDoc[]) => list.map((d) => d.seq);
    const expectedIn = (states: DeliveryState[]) => all.filter((d) => states.includes(d.state)).map((d) => d.seq);

    expect(seqs(await repo.queued('i1', 5, 34))).to.deep.equal([35, 36, 37, 38, 39]);
    expect(seqs(await repo.oldest('i1', 3))).to.deep.equal([1, 2, 3]);
    expect(seqs(await repo.oldest('i1', 3, 36))).to.deep.equal([37, 38, 39]);
    expect((await repo.hostRetries('https://receiver.example', 10)).map((d) => d.seq)).to.deep.equal(expectedIn(['retrying']));
    for (const status of ['pending', 'delivered', 'failed', undefined] as const) {
      const states: DeliveryState[] = status === 'pending' ? ['queued', 'retrying'] : status ? [status] : ['queued', 'retrying', 'delivered', 'failed'];
      const { total, items } = await repo.page('i1', status, 1, 5);
      expect(total, String(status)).to.equal(expectedIn(states).length);
      expect(seqs(items), String(status)).to.deep.equal(expectedIn(states).reverse().slice(0, 5));
    }

    // Only queued ones are read: the two before seq 35, then five.
    expect(await docs.explain(DELIVERIES, { instance_id: 'i1', state: 'queued', seq: { $gt: 34 } }, { sort: { seq: 1 }, limit: 5 })).to.include({
      index: 'open',
      docsExamined: 7,
    });
    expect(await docs.explain(DELIVERIES, { retry_host: 'https://receiver.example' }, { sort: { due_ms: 1 } })).to.include({
      index: 'retry_queue',
      docsExamined: expectedIn(['retrying']).length,
    });
  });

  it('reads no more of a log full of failed deliveries than the retention sweep asks for', async () => {
    await ensureDeliveryIndexes(docs);
    await docs.batch(Array.from({ length: 300 }, (_, i) => saveOp(delivery('i1', i + 1, 'failed'), { upsert: true })));
    const oldest = { instance_id: 'i1', seq: { $gt: 0 } };
    expect(await docs.explain(DELIVERIES, oldest, { sort: { seq: 1 }, limit: 10 })).to.include({ index: 'log', docsExamined: 10, returned: 10 });
    expect(await docs.explain(DELIVERIES, { instance_id: 'i1', state: 'queued', seq: { $gt: 0 } }, { sort: { seq: 1 }, limit: 10 })).to.include({ index: 'open', docsExamined: 0 });
  });

  it('sweeps expired final deliveries that lie past older pending ones, and nothing recent', async () => {
    await ensureDeliveryIndexes(docs);
    const states: DeliveryState[] = ['retrying', 'queued', 'delivered', 'failed', 'retrying', 'delivered'];
    await docs.batch(states.map((state, i) => saveOp(delivery('i1', i + 1, state), { upsert: true })));
    await docs.collection(HOOKS).insertOne({ _id: 'i1', url: '', events: [], secret_sealed: '', seq: 6 });
    // Created at seq seconds after the epoch: the cutoff falls between seq 5 and seq 6.
    const clock = { now: () => new Date(86_400_000 + 5_500) };
    const sweeper = new RetentionSweeper({ repo, clock, logger: pino({ level: 'silent' }), retentionDays: 1, intervalMs: 60_000, batch: 2 });
    expect(await sweeper.sweep()).to.deep.equal({ removed: 2 });
    expect((await repo.oldest('i1', 10)).map((d) => d.seq)).to.deep.equal([1, 2, 5, 6]);
  });

  it('writes a retry by hand durably: its answer is an acknowledgement', async () => {
    await ensureDeliveryIndexes(docs);
    const options: unknown[] = [];
    const batch = docs.batch.bind(docs);
    docs.batch = (ops, o) => (options.push(o), batch(ops, o));
    await repo.save(delivery('i1', 1, 'retrying'));
    expect(options).to.deep.equal([{ durable: true }]);
    expect((await repo.get('evt_i1_0001'))?.state).to.equal('retrying');
  });

  it('lets a first attempt that delivers leave the lookup of open deliveries', async () => {
    await ensureDeliveryIndexes(docs);
    const all = await seed();
    const first = all.find((d) => d.state === 'queued') as DeliveryDoc;
    await docs.batch([saveOp(afterAttempt(first, { kind: 'delivered', statusCode: 200 }, 1))]);
    const open = await docs.explain(DELIVERIES, { instance_id: 'i1', state: { $in: ['queued', 'retrying', 'failed'] } });
    expect(open).to.include({ index: 'open', covered: true, returned: all.filter((d) => d.state !== 'delivered').length - 1 });
    expect((await repo.page('i1', 'delivered', 1, 50)).total).to.equal(all.filter((d) => d.state === 'delivered').length + 1);
  });
});
