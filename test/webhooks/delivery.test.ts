/* eslint-disable @typescript-eslint/no-explicit-any -- bodies are read field by field */
import { expect } from 'chai';
import { DELIVERIES, statusOf, type DeliveryDoc } from '../../src/webhooks/deliveries/documents.js';
import { openHarness, type Harness } from './support/harness.js';
import { waitFor } from '../support/sandbox.js';
import { Receiver, verifies } from './support/receiver.js';

/** The stored deliveries, each with the status the log answers for it. */
const deliveries = async (h: Harness) =>
  (await h.docs.collection<DeliveryDoc>(DELIVERIES).find({}, { sort: { pos: 1 } })).map((d) => ({ ...d, status: statusOf(d.state) }));

describe('webhook delivery (reactor + dispatcher on the embedded stores)', function () {
  this.timeout(20_000);
  let h: Harness;
  let rx: Receiver;

  beforeEach(async () => {
    rx = await new Receiver().start();
    h = await openHarness();
  });
  afterEach(async () => {
    await h.close();
    await rx.stop();
  });

  it('sends only subscribed types, signed, with seq strictly increasing per instance', async () => {
    const a = await h.instance(rx.url, ['Message', 'Connected']);
    const b = await h.instance(rx.url, ['All']);
    await h.append(`session-${a.id}`, 'SessionConnected', { jid: '1@s.whatsapp.net', phone: '1', business: false });
    await h.append(`session-${a.id}`, 'PresenceUpdated', { jid: '2@s.whatsapp.net', state: 'available' });
    for (let i = 0; i < 5; i++) await h.message(a.id, `a${i}`);
    await h.append(`session-${b.id}`, 'PresenceUpdated', { jid: '2@s.whatsapp.net', state: 'unavailable' });
    for (let i = 0; i < 3; i++) await h.message(b.id, `b${i}`);
    await waitFor(() => rx.received.length === 10, '10 deliveries', 15_000);
    await new Promise((r) => setTimeout(r, 100));
    expect(rx.received).to.have.length(10);

    // Read in seq order, as receivers do: first attempts of an instance may overlap and arrive in
    // any order (WEBHOOK_CONCURRENCY_PER_INSTANCE); the arrival order is tested in ordered mode.
    const bySeq = [...rx.received].sort((x, y) => x.body.seq - y.body.seq);
    const fromA = bySeq.filter((r) => r.body.instance_id === a.id);
    const fromB = bySeq.filter((r) => r.body.instance_id === b.id);
    expect(fromA.map((r) => r.body.type)).to.deep.equal(['Connected', 'Message', 'Message', 'Message', 'Message', 'Message']);
    expect(fromB.map((r) => r.body.type)).to.deep.equal(['Presence', 'Message', 'Message', 'Message']);
    // The seq is the event's place in the instance's session stream, the same on every channel:
    // A's presence (not subscribed) leaves a gap.
    expect(fromA.map((r) => r.body.seq)).to.deep.equal([1, 3, 4, 5, 6, 7]);
    expect(fromB.map((r) => r.body.seq)).to.deep.equal([1, 2, 3, 4]);
    for (const [list, secret] of [[fromA, a.secret], [fromB, b.secret]] as const) {
      for (const r of list) {
        expect(verifies(secret, r), 'signature').to.equal(true);
        expect(r.headers['webhook-id']).to.equal(r.body.id);
        expect(r.body.id).to.match(/^evt_[0-9a-f]{32}$/);
      }
    }
    // A signature made with another instance's secret does not pass: the check can fail.
    expect(verifies(b.secret, fromA[0]!)).to.equal(false);
    expect(fromA[1]!.body.event.Message).to.deep.equal({ conversation: 'a0' });
    expect(Object.keys(fromA[1]!.body)).to.deep.equal(['id', 'type', 'instance_id', 'seq', 'created_at', 'event']);
  });

  it('signs every attempt after a committed secret rotation with the new secret, none with the old', async () => {
    const a = await h.instance(rx.url, ['Message']);
    await h.message(a.id, 'before');
    await waitFor(() => rx.received.length === 1, 'the first delivery');
    const rotated = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;
    await h.append(`instance-${a.id}`, 'WebhookSecretRotated', { webhook_secret_sealed: h.box.seal(rotated, `webhook-secret:${a.id}`) });
    for (let i = 0; i < 3; i++) await h.message(a.id, `after ${i}`);
    await waitFor(() => rx.received.length === 4, 'three more deliveries');
    const [before, ...after] = rx.received;
    expect(verifies(a.secret, before!)).to.equal(true);
    for (const r of after) {
      expect(verifies(rotated, r), r.body.event.Message.conversation).to.equal(true);
      expect(verifies(a.secret, r)).to.equal(false);
    }
  });

  it('applies the webhook settings in force at each event, not the latest ones', async () => {
    const other = await new Receiver().start();
    try {
      const a = await h.instance('', []);
      await h.message(a.id, 'before any webhook');
      await h.append(`instance-${a.id}`, 'WebhookConfigured', { url: rx.url, events: ['Message'] });
      await h.message(a.id, 'to the first url');
      await h.append(`instance-${a.id}`, 'WebhookConfigured', { url: other.url, events: ['Message'] });
      await h.message(a.id, 'to the second url');
      await h.append(`instance-${a.id}`, 'WebhookCleared', {});
      await h.message(a.id, 'after clearing');
      await waitFor(() => rx.received.length === 1 && other.received.length === 1, 'one delivery each');
      await new Promise((r) => setTimeout(r, 100));
      expect(rx.received.map((r) => r.body.event.Message.conversation)).to.deep.equal(['to the first url']);
      expect(other.received.map((r) => r.body.event.Message.conversation)).to.deep.equal(['to the second url']);
      // The third event of the instance's session stream, whatever each URL received before.
      expect(other.received[0]!.body.seq).to.equal(3);
      expect(await deliveries(h)).to.have.length(2);
    } finally {
      await other.stop();
    }
  });

  it('retries a 500 until the receiver answers 200, and records the attempts', async () => {
    rx.respond = (_, n) => (n <= 2 ? 500 : 200);
    const a = await h.instance(rx.url, ['Message']);
    await h.message(a.id, 'hello');
    await waitFor(() => rx.received.length === 1, 'the delivery after recovery');
    expect(rx.requests).to.equal(3);
    await waitFor(async () => (await deliveries(h))[0]?.status === 'delivered', 'status delivered');
    const [doc] = await deliveries(h);
    expect(doc).to.include({ status: 'delivered', attempts: 3, last_status_code: 200, last_error: null });
  });

  it('ends a 400 in failed at once, with no retry', async () => {
    rx.respond = () => ({ status: 400, body: 'bad payload\n' });
    const a = await h.instance(rx.url, ['Message']);
    await h.message(a.id, 'rejected');
    await waitFor(async () => (await deliveries(h))[0]?.status === 'failed', 'status failed');
    await new Promise((r) => setTimeout(r, 300));
    expect(rx.requests).to.equal(1);
    const [doc] = await deliveries(h);
    expect(doc).to.include({ status: 'failed', attempts: 1, last_status_code: 400, last_error: 'HTTP 400: bad payload', next_attempt_at: null });
  });

  it('treats 408, 425 and 429 as "later", not final', async () => {
    const codes = [408, 425, 429];
    rx.respond = (_, n) => codes[n - 1] ?? 200;
    const a = await h.instance(rx.url, ['Message']);
    await h.message(a.id, 'eventually');
    await waitFor(() => rx.received.length === 1, 'delivered after three soft refusals');
    expect(rx.requests).to.equal(4);
  });

  it('makes first attempts in seq order per instance with WEBHOOK_ORDERED=true', async () => {
    await h.close();
    h = await openHarness({ WEBHOOK_ORDERED: 'true' });
    const a = await h.instance(rx.url, ['Message']);
    rx.respond = () => ({ status: 200, delayMs: 2 });
    for (let i = 0; i < 40; i++) await h.message(a.id, `m${i}`);
    await waitFor(() => rx.received.length === 40, '40 deliveries');
    expect(rx.received.map((r) => r.body.seq)).to.deep.equal(Array.from({ length: 40 }, (_, i) => i + 1));
    // One attempt at a time, over kept-alive connections (undici may open a second while the
    // first finishes reading an answer): 40 requests, not 40 connections.
    expect(rx.sockets).to.be.at.most(2);
  });

  it('keeps hanging receivers on one host from taking every slot', async () => {
    // Few slots in all, so that without a per-host cap the hanging host would hold every one.
    await h.close();
    h = await openHarness({}, { perHost: Number(process.env.TEST_PER_HOST ?? 2), global: 4 });
    const slow = await new Receiver().start();
    slow.respond = () => 'hang';
    try {
      for (let i = 0; i < 6; i++) {
        const s = await h.instance(slow.url, ['Message']);
        await h.message(s.id, `slow ${i}`);
      }
      await waitFor(() => slow.requests >= 2, 'the slow host holding its slots');
      const f = await h.instance(rx.url, ['Message']);
      for (let i = 0; i < 20; i++) await h.message(f.id, `fast ${i}`);
      // 20 log appends under CI load can take seconds; without the cap the fast host would wait
      // out the 10 s attempt time limit of the hanging ones, which 8 s still tells apart.
      await waitFor(() => rx.received.length === 20, 'the fast host got everything', 8000);
      expect(slow.received).to.have.length(0);
      expect(slow.requests).to.equal(2);
    } finally {
      await slow.stop();
    }
  });

  it('delivers everything to a receiver that was down for a while', async () => {
    await rx.stop();
    const a = await h.instance(rx.url, ['Message']);
    for (let i = 0; i < 30; i++) await h.message(a.id, `while down ${i}`);
    await waitFor(async () => (await deliveries(h)).every((d) => d.attempts >= 2), 'some failed attempts');
    await rx.restart();
    await waitFor(() => rx.received.length >= 30, 'everything after the receiver came back', 10_000);
    const seqs = new Set(rx.received.map((r) => r.body.seq));
    expect(seqs.size).to.equal(30);
  });

  it('loses nothing across a stop and a restart of the dispatcher and the reactor', async () => {
    rx.respond = () => ({ status: 200, delayMs: 5 });
    const a = await h.instance(rx.url, ['Message']);
    for (let i = 0; i < 50; i++) await h.message(a.id, `m${i}`);
    await waitFor(() => rx.received.length >= 5, 'some deliveries');
    await h.halt();
    for (let i = 50; i < 80; i++) await h.message(a.id, `m${i}`);
    await h.restart();
    await waitFor(() => new Set(rx.received.map((r) => r.body.seq)).size === 80, 'all 80 deliveries', 10_000);
    expect(Math.max(...rx.received.map((r) => r.body.seq))).to.equal(80);
  });
});
