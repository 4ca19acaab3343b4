/* eslint-disable @typescript-eslint/no-explicit-any -- route handlers are called with the fields they read */
import { expect } from 'chai';
import { webhookDeliveryRoutes } from '../../src/api/routes/webhook-deliveries.js';
import { DELIVERIES, statusOf, type DeliveryDoc } from '../../src/webhooks/deliveries/documents.js';
import { FakeClock, openHarness, type Harness } from './support/harness.js';
import { waitFor } from '../support/sandbox.js';
import { Receiver } from './support/receiver.js';

/** The one stored delivery, with the status the log answers for it. */
const only = async (h: Harness) => {
  const [d] = await h.docs.collection<DeliveryDoc>(DELIVERIES).find({});
  return d && { ...d, status: statusOf(d.state) };
};

describe('webhook retries over time', function () {
  this.timeout(20_000);
  let h: Harness;
  let rx: Receiver;
  afterEach(async () => {
    await h.close();
    await rx.stop();
  });

  it('gives up at the retry horizon (fake clock), and says why', async () => {
    rx = await new Receiver().start();
    rx.respond = () => 503;
    const clock = new FakeClock();
    h = await openHarness({ WEBHOOK_RETRY_HORIZON_S: '3600', WEBHOOK_RETRY_BASE_MS: '60000', WEBHOOK_RETRY_MAX_MS: '600000' }, {}, clock);
    const a = await h.instance(rx.url, ['Message']);
    await h.message(a.id, 'never accepted');
    await waitFor(async () => (await only(h))?.attempts === 1, 'the first attempt');
    const first = (await only(h))!;
    expect(first).to.include({ status: 'pending', last_status_code: 503, last_error: 'HTTP 503' });
    expect(first.due_ms - clock.now().getTime()).to.be.within(0, 60_000);

    // Within the horizon, each due retry is attempted.
    clock.advance(60_000);
    await h.webhooks.dispatcher.poke();
    await waitFor(async () => (await only(h))!.attempts === 2, 'the second attempt');
    expect(rx.requests).to.equal(2);

    // Past it, the next retry would fall after the horizon: the delivery fails for good.
    clock.advance(3_600_000);
    await h.webhooks.dispatcher.poke();
    await waitFor(async () => (await only(h))!.status === 'failed', 'failed at the horizon');
    const last = (await only(h))!;
    expect(last.last_error).to.match(/retry horizon/);
    expect(last.next_attempt_at).to.equal(null);
  });

  it('applies a retry by hand that arrives while the attempt is in flight, after that attempt', async () => {
    rx = await new Receiver().start();
    // The first attempt is refused slowly (final), every later one accepted.
    rx.respond = (_, n) => (n === 1 ? { status: 400, delayMs: 300 } : 200);
    h = await openHarness();
    const a = await h.instance(rx.url, ['Message']);
    await h.message(a.id, 'retried while in flight');
    await waitFor(() => rx.requests === 1, 'the first attempt in flight');
    const id = (await only(h))!._id;
    const retry = webhookDeliveryRoutes(h.webhooks.log).find((r) => r.path.endsWith('/retry'))!;
    const answer = await retry.handler({ instance: { _id: a.id }, params: { id: a.id, deliveryId: id } } as any);
    expect((answer.body as any).data).to.deep.equal({ status: 'pending' });
    await waitFor(() => rx.received.length === 1, 'delivered by the retry');
    await waitFor(async () => (await only(h))!.status === 'delivered', 'delivered in the log');
    expect((await only(h))!.attempts).to.equal(2);
  });
});
