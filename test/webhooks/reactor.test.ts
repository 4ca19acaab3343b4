import { typedEvents } from '../../src/domain/recorded.js';
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedDocumentStore } from '../../src/infra/docstore/embedded/embedded-document-store.js';
import type { DocumentStore, WriteOp } from '../../src/infra/docstore/port.js';
import { ProjectionRunner } from '../../src/projections/runner.js';
import { WebhookReactor } from '../../src/webhooks/webhook-reactor.js';
import { DELIVERIES, HOOKS, deliveryId, type DeliveryDoc, type HookDoc } from '../../src/webhooks/deliveries/documents.js';
import { logger, openHarness, type Harness } from './support/harness.js';

/** Runs a lone reactor over the harness's log into `docs`, until it has caught up. */
async function project(h: Harness, docs: DocumentStore): Promise<void> {
  const runner = new ProjectionRunner(h.events, docs, [new WebhookReactor(logger)], logger);
  await runner.start();
  const caughtUp = await runner.waitFor(await h.events.headPosition(), ['webhooks'], 10_000);
  await runner.stop();
  expect(caughtUp, 'caught up').to.equal(true);
}

/** Each event's seq as CONTRACT gives it on every channel: its place in its instance's session stream. */
async function logSeqs(h: Harness): Promise<Map<string, number>> {
  const seqs = new Map<string, number>();
  for (const e of await h.events.readAll()) if (e.streamId.startsWith('session-')) seqs.set(deliveryId(e.id), Number(e.revision) + 1);
  return seqs;
}

/** The seq a delivery must carry: its event's, the same in the body as in the document. */
function expectLogSeqs(got: { seq: number; body: string }[], seqs: Map<string, number>): void {
  for (const d of got) {
    const body = JSON.parse(d.body) as { id: string; seq: number };
    expect(d.seq, `seq of ${body.id}`).to.equal(seqs.get(body.id));
    expect(body.seq).to.equal(d.seq);
  }
}

const increasing = (xs: number[]) => xs.every((x, i) => i === 0 || x > xs[i - 1]!);

const decisions = async (docs: DocumentStore) =>
  (await docs.collection<DeliveryDoc>(DELIVERIES).find({}, { sort: { pos: 1 } })).map((d) => ({
    id: d._id,
    instance: d.instance_id,
    seq: d.seq,
    url: d.url,
    body: d.body,
  }));

/**
 * Fails the first batch that records deliveries after the instances were created (so the replay
 * does not start from InstanceCreated), as a full disk or a lost connection would.
 */
function failingOnce(inner: DocumentStore): DocumentStore & { failures: number } {
  let failures = 0;
  return {
    get failures() {
      return failures;
    },
    collection: (name) => inner.collection(name),
    ping: () => inner.ping(),
    flush: () => inner.flush(),
    close: () => inner.close(),
    async batch(ops: WriteOp[], options) {
      const creates = ops.some((o) => o.collection === HOOKS && o.op === 'replaceOne' && (o.doc as HookDoc).seq === 0);
      if (failures === 0 && !creates && ops.some((o) => o.collection === DELIVERIES)) {
        failures++;
        throw new Error('disk full');
      }
      return inner.batch(ops, options);
    },
  };
}

describe('webhook reactor', function () {
  this.timeout(20_000);
  let h: Harness;
  let dir: string;

  beforeEach(async () => {
    h = await openHarness();
    await h.halt();
    dir = await mkdtemp(join(tmpdir(), 'webhooks-replay-'));
  });
  afterEach(async () => {
    await h.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Two instances, settings changing between their events. */
  async function history(): Promise<void> {
    const a = await h.instance('https://hooks.example.com/a', ['Message']);
    const b = await h.instance('', []);
    for (let i = 0; i < 5; i++) await h.message(a.id, `a${i}`);
    await h.message(b.id, 'not delivered: no webhook yet');
    await h.append(`instance-${b.id}`, 'WebhookConfigured', { url: 'https://hooks.example.com/b', events: ['All'] });
    await h.append(`instance-${a.id}`, 'WebhookConfigured', { url: 'https://hooks.example.com/a2', events: ['Message'] });
    for (let i = 0; i < 5; i++) {
      await h.message(a.id, `a${i + 5}`);
      await h.message(b.id, `b${i}`);
    }
    await h.append(`instance-${a.id}`, 'WebhookCleared', {});
    await h.message(a.id, 'not delivered: cleared');
  }

  it('makes the same decisions, with the same seqs, when the log is replayed from the start', async () => {
    await history();
    const first = await EmbeddedDocumentStore.open({ path: join(dir, 'one') });
    const second = await EmbeddedDocumentStore.open({ path: join(dir, 'two') });
    try {
      await project(h, first);
      await project(h, second);
      const one = await decisions(first);
      expect(one).to.have.length(15);
      expectLogSeqs(one, await logSeqs(h));
      const seqsTo = (url: string) => one.filter((d) => d.url.endsWith(url)).map((d) => d.seq);
      for (const url of ['/a', '/a2', '/b']) expect(seqsTo(url)).to.have.length(5).and.satisfy(increasing);
      // One instance's seq goes on across its webhook changes.
      expect(seqsTo('/a2')[0]).to.be.greaterThan(seqsTo('/a')[4]!);
      expect(await decisions(second)).to.deep.equal(one);
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('replays a failed commit with the decisions it made the first time (no seq gap, no duplicate)', async () => {
    const inner = await EmbeddedDocumentStore.open({ path: join(dir, 'flaky') });
    const flaky = failingOnce(inner);
    // Live, so the runner commits in small batches and the failure lands after the creations.
    // The dispatcher is told of each delivery once it is committed: it reads it there at once.
    const told: { instance: string; seq: number; stored: Promise<DeliveryDoc | null> }[] = [];
    const reactor = new WebhookReactor(logger, ({ queued }) => {
      for (const n of queued) told.push({ instance: n.instance_id, seq: n.seq, stored: inner.collection<DeliveryDoc>(DELIVERIES).findOne({ _id: n._id }) });
    });
    const runner = new ProjectionRunner(h.events, flaky, [reactor], logger);
    await runner.start();
    try {
      await history();
      expect(await runner.waitFor(await h.events.headPosition(), ['webhooks'], 10_000)).to.equal(true);
      await runner.stop();
      expect(flaky.failures).to.equal(1);
      const got = await decisions(inner);
      expect(got).to.have.length(15);
      expectLogSeqs(got, await logSeqs(h));
      for (const instance of new Set(got.map((d) => d.instance))) expect(got.filter((d) => d.instance === instance).map((d) => d.seq)).to.satisfy(increasing);
      for (const t of told) expect(await t.stored, `seq ${t.seq} told before its commit`).to.not.equal(null);
      const toldSeqs = (instance: string) => told.filter((t) => t.instance === instance).map((t) => t.seq);
      for (const instance of new Set(got.map((d) => d.instance))) {
        expect([...new Set(toldSeqs(instance))]).to.deep.equal(got.filter((d) => d.instance === instance).map((d) => d.seq));
      }
    } finally {
      await runner.stop();
      await inner.close();
    }
  });

  it('goes on from the last recorded seq after a restart, though hooks are written only with their settings', async () => {
    await history();
    const docs = await EmbeddedDocumentStore.open({ path: join(dir, 'restarted') });
    try {
      await project(h, docs);
      const before = await decisions(docs);
      // The fold was last written when each instance's settings changed, before later deliveries.
      const hooks = await docs.collection<HookDoc>(HOOKS).find({});
      expect(hooks.map((x) => x.seq).sort((x, y) => x - y)).to.deep.equal([0, 10]);
      const [a, b] = [before[0]!.instance, before.find((d) => d.url.endsWith('/b'))!.instance];
      await h.append(`instance-${a}`, 'WebhookConfigured', { url: 'https://hooks.example.com/a3', events: ['Message'] });
      await h.message(a, 'after the restart');
      await h.message(b, 'after the restart');
      await project(h, docs);
      const after = (await decisions(docs)).slice(before.length);
      expect(after.map((d) => d.instance)).to.deep.equal([a, b]);
      expectLogSeqs(after, await logSeqs(h));
      expect(after[0]!.seq).to.be.greaterThan(Math.max(...before.filter((d) => d.instance === a).map((d) => d.seq)));
      expect(after[1]!.seq).to.be.greaterThan(Math.max(...before.filter((d) => d.instance === b).map((d) => d.seq)));
    } finally {
      await docs.close();
    }
  });

  it('hands on each delivery once when a failed commit is replayed, however often', async () => {
    await history();
    const told: string[] = [];
    const reactor = new WebhookReactor(logger, ({ queued }) => told.push(...queued.map((n) => n._id)));
    const docs = await EmbeddedDocumentStore.open({ path: join(dir, 'replayed') });
    try {
      await reactor.setup(docs);
      const log = typedEvents(await h.events.readAll(), (_, reason) => expect.fail(reason));
      // Every batch after the first fails twice before it commits: its events are applied three times.
      const cut = 3;
      for (const event of log.slice(0, cut)) reactor.apply(event);
      reactor.committed((log[cut - 1] as { position: bigint }).position);
      for (let attempt = 0; attempt < 3; attempt++) for (const event of log.slice(cut)) reactor.apply(event);
      reactor.committed((log[log.length - 1] as { position: bigint }).position);
      expect(told).to.have.length(15);
      expect(new Set(told).size).to.equal(15);
    } finally {
      await docs.close();
    }
  });
});
