/* eslint-disable @typescript-eslint/no-explicit-any -- route handlers are called with the fields they read; answers are read field by field */
import { expect } from 'chai';
import { webhookDeliveryRoutes } from '../../src/api/routes/webhook-deliveries.js';
import { DomainError } from '../../src/domain/errors.js';
import { DeliveryRepo } from '../../src/webhooks/deliveries/delivery-repo.js';
import type { Document, DocumentStore } from '../../src/infra/docstore/port.js';
import { DELIVERIES, HOOKS, statusOf, type DeliveryDoc, type HookDoc } from '../../src/webhooks/deliveries/documents.js';
import { expectError, newAccount, newInstance, startTestGateway, type TestGateway } from '../support/gateway.js';
import { phoneSends } from '../support/chats.js';
import { newPhone, pairByQr, waitFor } from '../support/sandbox.js';
import { FakeClock, openHarness, type Harness } from './support/harness.js';
import { Receiver } from './support/receiver.js';

const DAY_MS = 86_400_000;

/** What the receiver answers, by the message text: a 400 is final, a 503 keeps it retrying. */
const byText = (r: { body: any }) => {
  const text: string = r.body?.event?.Message?.conversation ?? '';
  if (text.startsWith('fail')) return 400;
  if (text.startsWith('pending')) return 503;
  return 200;
};

describe('webhook delivery log retention', function () {
  this.timeout(30_000);

  describe('on the reactor and dispatcher (fake clock)', () => {
    let h: Harness;
    let rx: Receiver;
    let clock: FakeClock;

    beforeEach(async () => {
      rx = await new Receiver().start();
      rx.respond = byText;
      clock = new FakeClock();
    });
    afterEach(async () => {
      await h.close();
      await rx.stop();
    });

    const open = (tuning = {}) =>
      openHarness(
        {
          SESSION_RETENTION_DAYS: '30',
          // Far beyond the test's 31 days, so the pending delivery stays retrying instead of failing at the horizon.
          WEBHOOK_RETRY_HORIZON_S: String(100 * 86400),
          WEBHOOK_RETRY_BASE_MS: '60000',
          WEBHOOK_RETRY_MAX_MS: '600000',
        },
        tuning,
        clock,
      );

    const all = () => h.docs.collection<DeliveryDoc>(DELIVERIES).find({}, { sort: { pos: 1 } });
    /** Every delivery attempted at least once (none queued): final, or retrying after a 503. */
    const settled = async (n: number) =>
      waitFor(async () => {
        const docs = await all();
        return docs.length === n && docs.every((d) => d.attempts >= 1 && d.state !== 'queued');
      }, `${n} attempted deliveries`);
    const text = (d: DeliveryDoc) => JSON.parse(d.body).event.Message.conversation as string;
    /** An instance that got these messages, each attempted and its outcome written. */
    const settledInstance = async (...texts: string[]) => {
      const instance = await h.instance(rx.url, ['Message']);
      for (const t of texts) await h.message(instance.id, t);
      await settled(texts.length);
      await waitFor(() => h.webhooks.dispatcher.busy === 0, 'the outcomes settled');
      return instance;
    };

    /** The delivery log route, called as the router calls it. */
    const log = async (instanceId: string, status?: string) => {
      const route = webhookDeliveryRoutes(h.webhooks.log).find((r) => r.method === 'get' && r.path.endsWith('/webhook/deliveries'))!;
      const answer = await route.handler({ instance: { _id: instanceId }, query: status ? { status } : {}, params: { id: instanceId } } as any);
      return answer.body as any;
    };
    const retry = async (instanceId: string, deliveryId: string) => {
      const route = webhookDeliveryRoutes(h.webhooks.log).find((r) => r.path.endsWith('/retry'))!;
      return route.handler({ instance: { _id: instanceId }, params: { id: instanceId, deliveryId } } as any);
    };

    it('removes final deliveries older than SESSION_RETENTION_DAYS, and keeps recent and pending ones', async () => {
      h = await open({ retentionBatch: 2 });
      const a = await h.instance(rx.url, ['Message']);
      const b = await h.instance(rx.url, ['Message']);
      for (let i = 1; i <= 3; i++) await h.message(a.id, `old delivered ${i}`);
      await h.message(a.id, 'fail old');
      await h.message(a.id, 'pending old');
      await h.message(b.id, 'old delivered b');
      await h.message(b.id, 'fail old b');
      await settled(7);

      // 29 days on: nothing is old enough yet.
      clock.advance(29 * DAY_MS);
      await h.message(a.id, 'recent delivered');
      await h.message(a.id, 'fail recent');
      await settled(9);
      expect(await h.webhooks.retention.sweep()).to.deep.equal({ removed: 0 });
      expect((await log(a.id)).total).to.equal(7);
      expect((await log(b.id)).total).to.equal(2);
      const before = await all();
      const oldFinal = before.filter((d) => /old/.test(text(d)) && d.state !== 'retrying');
      expect(oldFinal.map(text)).to.have.members(['old delivered 1', 'old delivered 2', 'old delivered 3', 'fail old', 'old delivered b', 'fail old b']);
      expect(oldFinal.map((d) => d.state)).to.include.members(['delivered', 'failed']);

      // 31 days after the first events: those that reached a final state go, the rest stay.
      clock.advance(2 * DAY_MS);
      expect(await h.webhooks.retention.sweep()).to.deep.equal({ removed: 6 });
      const left = await all();
      expect(left.map(text)).to.deep.equal(['pending old', 'recent delivered', 'fail recent']);
      const pending = left.find((d) => text(d) === 'pending old')!;
      expect(statusOf(pending.state)).to.equal('pending');

      const page = await log(a.id);
      expect(page).to.include({ total: 3, total_pages: 1 });
      expect(page.content.map((d: any) => [d.id, d.status])).to.deep.equal([
        [left[2]!._id, 'failed'],
        [left[1]!._id, 'delivered'],
        [pending._id, 'pending'],
      ]);
      expect((await log(a.id, 'failed')).content.map((d: any) => d.id)).to.deep.equal([left[2]!._id]);
      expect(await log(b.id)).to.include({ total: 0 });
      // A swept delivery is gone for the retry route too: 404, as for one that never existed.
      const swept = oldFinal.find((d) => d.state === 'failed' && d.instance_id === a.id)!;
      const refused = await retry(a.id, swept._id).then(
        () => null,
        (err: unknown) => err,
      );
      expect(refused).to.be.instanceOf(DomainError).with.property('type', 'not_found');

      // Sweeping again finds nothing more to do.
      expect(await h.webhooks.retention.sweep()).to.deep.equal({ removed: 0 });
    });

    it('never hands out a removed seq again, even once all of an instance is swept and the gateway restarted', async () => {
      h = await open();
      const a = await settledInstance('old delivered 1', 'fail old 2');
      clock.advance(31 * DAY_MS);
      expect(await h.webhooks.retention.sweep()).to.deep.equal({ removed: 2 });
      expect(await all()).to.deep.equal([]);

      await h.halt();
      await h.restart();
      await h.message(a.id, 'after the restart');
      await settled(1);
      const [next] = await all();
      expect(next!.seq).to.equal(3);
      expect(JSON.parse(next!.body).seq).to.equal(3);
    });

    it('raises the seq floor before it removes anything, so a crash in between loses no seq', async () => {
      h = await open();
      const a = await settledInstance('old delivered 1', 'old delivered 2');
      const docs: DocumentStore = {
        batch: (ops, options) => h.docs.batch(ops, options),
        ping: () => h.docs.ping(),
        flush: () => h.docs.flush(),
        close: () => h.docs.close(),
        collection: <T extends Document>(name: string) => {
          const inner = h.docs.collection<T>(name);
          if (name !== DELIVERIES) return inner;
          // The process dies as the removal is written.
          return Object.assign(Object.create(inner) as typeof inner, { deleteMany: () => Promise.reject(new Error('killed')) });
        },
      };
      const swept = await all();
      await new DeliveryRepo(docs).removeIfFinal(a.id, swept).then(
        () => expect.fail('the removal should have failed'),
        () => undefined,
      );
      expect(await all()).to.have.length(2);
      expect((await h.docs.collection<HookDoc>(HOOKS).findOne({ _id: a.id }))!.seq).to.equal(2);
    });

    it('never loses a retry by hand to a sweep, whichever comes first', async () => {
      h = await open();
      const repo = new DeliveryRepo(h.docs);
      const a = await settledInstance('fail then retried', 'fail then swept and retried');
      clock.advance(31 * DAY_MS);
      // The receiver now keeps the retries pending.
      rx.respond = () => 503;
      const [first, second] = await all();
      expect([first!.state, second!.state]).to.deep.equal(['failed', 'failed']);

      // Retried first: pending again, so a sweep that read it as failed just before does not remove it.
      expect(((await retry(a.id, first!._id)).body as any).data).to.deep.equal({ status: 'pending' });
      expect(await repo.removeIfFinal(a.id, [first!])).to.equal(0);

      // Swept between the retry's read and its write: the write puts it back, pending. The sweep
      // runs right after the retry route has read the delivery.
      const get = DeliveryRepo.prototype.get;
      let swept: unknown;
      DeliveryRepo.prototype.get = async function (id) {
        const read = await get.call(this, id);
        DeliveryRepo.prototype.get = get;
        swept = await h.webhooks.retention.sweep();
        expect(await get.call(this, id)).to.equal(null);
        return read;
      };
      try {
        expect(((await retry(a.id, second!._id)).body as any).data).to.deep.equal({ status: 'pending' });
      } finally {
        DeliveryRepo.prototype.get = get;
      }
      expect(swept).to.deep.equal({ removed: 1 });

      expect(await h.webhooks.retention.sweep()).to.deep.equal({ removed: 0 });
      const page = await log(a.id);
      expect(page.content.map((d: any) => [d.id, d.status])).to.deep.equal([
        [second!._id, 'pending'],
        [first!._id, 'pending'],
      ]);
    });

    it('sweeps on its own timer once started, and stops with the webhooks', async () => {
      h = await open({ retentionIntervalMs: 20 });
      const a = await h.instance(rx.url, ['Message']);
      await h.message(a.id, 'swept by the timer');
      await settled(1);
      clock.advance(31 * DAY_MS);
      await waitFor(async () => (await all()).length === 0, 'the timer to sweep');
      expect(await log(a.id)).to.include({ total: 0 });

      await h.message(a.id, 'delivered before the stop');
      await settled(1);
      await h.webhooks.stop();
      clock.advance(31 * DAY_MS);
      await new Promise((r) => setTimeout(r, 200));
      expect((await all()).map(text)).to.deep.equal(['delivered before the stop']);
    });
  });

  describe('over HTTP (sandbox network, fake clock)', () => {
    let gw: TestGateway;
    let rx: Receiver;
    const clock = new FakeClock();

    before(async () => {
      gw = await startTestGateway(
        { MESSAGING_NETWORK: 'sandbox', SESSION_RETENTION_DAYS: '30', TRIAL_DAYS: '3650' },
        { clock, webhooks: { retentionIntervalMs: 50 } },
      );
      rx = await new Receiver().start();
    });
    after(async () => {
      await gw.stop();
      await rx.stop();
    });

    it('no longer lists a delivery once it is older than the retention', async () => {
      const { api } = gw;
      const owner = await newAccount(api);
      const instance = await newInstance(api, owner, { webhook: rx.url, events_subscribe: ['Message'] });
      const own = await newPhone(api, owner);
      const contact = await newPhone(api, owner, { contacts: [own.phone] });
      await pairByQr(api, owner, instance.id, own.phone);
      // The instance-token pair does not expire with the fake clock, unlike the JWT.
      const headers = { 'x-instance-token': instance.token, 'x-client-token': owner.clientToken };
      const log = async () => {
        const res = await api('GET', `/instances/${instance.id}/webhook/deliveries`, { headers });
        expect(res.status, res.text).to.equal(200);
        return res.body;
      };
      const send = (text: string, jwt = owner.jwt) => phoneSends(gw, { ...owner, jwt }, contact.phone, own.phone, { text });

      await send('old message');
      await waitFor(async () => (await log()).content[0]?.status === 'delivered', 'the old delivery in the log');
      const old = (await log()).content[0].id as string;
      clock.advance(31 * DAY_MS);
      // The sweep timer runs every 50 ms here: the old delivery leaves the log on its own.
      await waitFor(async () => (await log()).total === 0, 'the old delivery swept');
      const login = await api('POST', '/auth/login', { body: { email: owner.email, password: owner.password } });
      await send('new message', login.body.access_token as string);
      await waitFor(async () => (await log()).content[0]?.status === 'delivered', 'the new delivery in the log');
      await new Promise((r) => setTimeout(r, 200));
      const page = await log();
      expect(page.total).to.equal(1);
      expect(page.content.map((d: any) => d.id)).to.not.include(old);
      expect(rx.received.map((r) => r.body.event.Message.conversation)).to.deep.equal(['old message', 'new message']);
      expectError(await api('POST', `/instances/${instance.id}/webhook/deliveries/${old}/retry`, { headers }), 404, 'not_found');
    });
  });
});
