/* eslint-disable @typescript-eslint/no-explicit-any -- bodies are read field by field */
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../src/infra/config/config.js';
import { DELIVERIES, type DeliveryDoc } from '../../src/webhooks/deliveries/documents.js';
import type { WebhookTuning } from '../../src/webhooks/index.js';
import { waitFor } from '../support/sandbox.js';
import { openHarness, type Harness } from './support/harness.js';
import { Receiver } from './support/receiver.js';

/** How long the receivers hold each request: long enough for attempts to overlap. */
const HOLD_MS = 150;

describe('webhook delivery under load (CONTRACT.md "Webhook delivery under load")', function () {
  this.timeout(20_000);
  let h: Harness | undefined;
  const receivers: Receiver[] = [];

  const open = async (env: Record<string, string>, tuning: WebhookTuning = {}) => (h = await openHarness(env, tuning));
  const receiver = async (hold: number | 'hang' = HOLD_MS) => {
    const rx = await new Receiver().start();
    rx.respond = () => (hold === 'hang' ? 'hang' : { status: 200, delayMs: hold });
    receivers.push(rx);
    return rx;
  };
  const seqsOf = (rx: Receiver, instanceId: string) =>
    rx.received.filter((r) => r.body.instance_id === instanceId).map((r) => r.body.seq as number);
  const oneToN = (n: number) => Array.from({ length: n }, (_, i) => i + 1);
  /** Appends `count` messages to each instance together: a backlog at once, however slow the machine. */
  const burst = (harness: Harness, ids: string[], count: number) =>
    Promise.all(ids.flatMap((id) => Array.from({ length: count }, (_, i) => harness.message(id, `m${i}`))));

  afterEach(async () => {
    await h?.close();
    h = undefined;
    for (const rx of receivers.splice(0)) await rx.stop();
  });

  it('reads the three settings with CONTRACT.md\'s defaults, and refuses values that make no sense', () => {
    expect(loadConfig({})).to.include({ WEBHOOK_CONCURRENCY_PER_INSTANCE: 8, WEBHOOK_ORDERED: false, WEBHOOK_CONCURRENCY_PER_HOST: 64 });
    expect(loadConfig({ WEBHOOK_ORDERED: 'true', WEBHOOK_CONCURRENCY_PER_HOST: '3' })).to.include({ WEBHOOK_ORDERED: true, WEBHOOK_CONCURRENCY_PER_HOST: 3 });
    for (const bad of [{ WEBHOOK_CONCURRENCY_PER_INSTANCE: '0' }, { WEBHOOK_CONCURRENCY_PER_HOST: 'many' }, { WEBHOOK_ORDERED: 'maybe' }]) {
      expect(() => loadConfig(bad), JSON.stringify(bad)).to.throw(ConfigError, Object.keys(bad)[0]);
    }
  });

  it('has up to WEBHOOK_CONCURRENCY_PER_INSTANCE first attempts of one instance in flight, never more', async () => {
    const harness = await open({ WEBHOOK_CONCURRENCY_PER_INSTANCE: '4' });
    const rx = await receiver();
    const a = await harness.instance(rx.url, ['Message']);
    await burst(harness, [a.id], 24);
    await waitFor(() => rx.received.length === 24, '24 deliveries');
    expect(rx.peakFirstOf.get(a.id)).to.equal(4);
    expect(rx.requests).to.equal(24);
    // Each seq once: concurrency changes the arrival order, never the numbering.
    expect([...seqsOf(rx, a.id)].sort((x, y) => x - y)).to.deep.equal(oneToN(24));
    const deliveries = harness.docs.collection<DeliveryDoc>(DELIVERIES);
    await waitFor(async () => (await deliveries.count({ instance_id: a.id, state: 'delivered' })) === 24, 'all 24 recorded delivered');
    expect(await deliveries.count({ instance_id: a.id })).to.equal(24);
  });

  it('bounds first attempts, not retries: one that timed out is retried beside the next first attempts of its instance', async () => {
    // A short attempt limit stands for the 10 s one a hung receiver meets on a slow machine.
    const harness = await open({ WEBHOOK_CONCURRENCY_PER_INSTANCE: '4' }, { timeoutMs: 1000 });
    const rx = await receiver('hang');
    const a = await harness.instance(rx.url, ['Message']);
    await burst(harness, [a.id], 12);
    // The third four start once the second four time out: by then the first four were retried beside the second.
    await waitFor(() => rx.requestedIds.size === 12, 'first attempts of all 12 started', 15_000);
    expect(rx.peakFirstOf.get(a.id)).to.equal(4);
    // The receiver sees more of the instance at once than the bound: retries are outside it (CONTRACT.md).
    expect(rx.peakOf.get(a.id)).to.be.greaterThan(4);
  });

  it('sends each instance\'s first attempts strictly one after another with WEBHOOK_ORDERED=true', async () => {
    const harness = await open({ WEBHOOK_ORDERED: 'true', WEBHOOK_CONCURRENCY_PER_INSTANCE: '8' });
    const rx = await receiver(20);
    const a = await harness.instance(rx.url, ['Message']);
    const b = await harness.instance(rx.url, ['Message']);
    await burst(harness, [a.id, b.id], 15);
    await waitFor(() => rx.received.length === 30, '30 deliveries');
    expect(rx.peakOf.get(a.id)).to.equal(1);
    expect(rx.peakOf.get(b.id)).to.equal(1);
    // Ordered per instance, not across them: the two instances did overlap.
    expect(rx.peak).to.equal(2);
    expect(seqsOf(rx, a.id)).to.deep.equal(oneToN(15));
    expect(seqsOf(rx, b.id)).to.deep.equal(oneToN(15));
  });

  it('caps what one receiver host gets at once across instances at WEBHOOK_CONCURRENCY_PER_HOST', async () => {
    const harness = await open({ WEBHOOK_CONCURRENCY_PER_HOST: '3' });
    const rx = await receiver();
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await harness.instance(rx.url, ['Message'])).id);
    await burst(harness, ids, 6);
    await waitFor(() => rx.received.length === 24, '24 deliveries');
    expect(rx.peak).to.equal(3);
    for (const id of ids) expect([...seqsOf(rx, id)].sort((x, y) => x - y)).to.deep.equal(oneToN(6));
  });

  it('attempts first attempts again when their outcomes could not be written, until they are recorded', async () => {
    const harness = await open({});
    const rx = await receiver(0);
    const a = await harness.instance(rx.url, ['Message']);
    // The store refuses the dispatcher's outcome writes (deliveries no longer queued) for a while:
    // longer than the writer's own retries, so it gives them up.
    const batch = harness.docs.batch.bind(harness.docs);
    let refused = 0;
    harness.docs.batch = async (ops, options) => {
      const outcome = ops.some((op) => op.collection === DELIVERIES && 'doc' in op && (op.doc as DeliveryDoc).state !== 'queued');
      if (outcome && refused < 8) {
        refused++;
        throw new Error('disk trouble');
      }
      return batch(ops, options);
    };
    await burst(harness, [a.id], 5);
    const deliveries = harness.docs.collection<DeliveryDoc>(DELIVERIES);
    await waitFor(async () => (await deliveries.count({ instance_id: a.id, state: 'delivered' })) === 5, 'all 5 recorded delivered', 10_000);
    expect(refused).to.equal(8);
    // Sent again since the first outcomes were lost: duplicates of the same bytes, none missing.
    expect(rx.requests).to.be.greaterThan(5);
    expect(new Set(rx.received.map((r) => r.body.seq))).to.deep.equal(new Set(oneToN(5)));
  });

  it('lets a host that never answers take only its own cap, so another host is not delayed', async () => {
    // Few slots in all: without the per-host cap the hanging host would hold every one of them.
    const harness = await open({ WEBHOOK_CONCURRENCY_PER_HOST: '2' }, { global: 4 });
    const slow = await receiver('hang');
    const fast = await receiver(0);
    for (let i = 0; i < 6; i++) {
      const s = await harness.instance(slow.url, ['Message']);
      for (let j = 0; j < 3; j++) await harness.message(s.id, `slow ${i}.${j}`);
    }
    await waitFor(() => slow.requests >= 2, 'the slow host holding its slots');
    const f = await harness.instance(fast.url, ['Message']);
    const started = Date.now();
    await burst(harness, [f.id], 20);
    // `took` includes 20 log appends, seconds on a loaded CI box; without the cap the fast host
    // would wait out the 10 s attempt time limit of the hanging ones, which 8 s still tells apart.
    await waitFor(() => fast.received.length === 20, 'the fast host got everything', 8000);
    const took = Date.now() - started;
    expect(slow.requests).to.equal(2);
    expect(slow.received).to.have.length(0);
    expect(took).to.be.below(8000);
  });
});
