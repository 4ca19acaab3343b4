/* eslint-disable @typescript-eslint/no-explicit-any -- test answers are read field by field */
import { expect } from 'chai';
import { newAccount, newInstance, startTestGateway, type TestAccount, type TestGateway } from '../support/gateway.js';
import { waitFor } from '../support/sandbox.js';
import { StripeServer } from '../servers/stripe/stripe-server.js';

const SECRET_KEY = 'sk_test_gateway_0123456789';
const WEBHOOK_SECRET = 'whsec_stripe_test_secret_abcdef';
const nowS = () => Math.floor(Date.now() / 1000);

/** Issue 27: what a signed Stripe event can do besides what Stripe means it to. */
describe('billing with Stripe: replayed, early and oversized events', function () {
  this.timeout(30_000);
  let stripe: StripeServer;
  let gw: TestGateway;
  let owner: TestAccount;
  const get = async (id: string) => (await gw.api('GET', `/instances/${id}`, { token: owner.jwt })).body;

  before(async () => {
    stripe = new StripeServer({ secretKey: SECRET_KEY, priceId: 'price_monthly', webhookSecret: WEBHOOK_SECRET, periodSeconds: 30 * 86_400 });
    await stripe.start();
    gw = await startTestGateway({ BILLING_PROVIDER: 'stripe', STRIPE_SECRET_KEY: SECRET_KEY, STRIPE_PRICE_ID: 'price_monthly', STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET, STRIPE_API_BASE: stripe.url });
    stripe.webhookUrl = `${gw.gateway.url}/billing/stripe/webhook`;
    owner = await newAccount(gw.api);
    // The first subscribe makes the account's Stripe customer (402: no card yet).
    const first = await newInstance(gw.api, owner);
    await gw.api('POST', `/instances/${first.id}/subscribe`, { token: owner.jwt });
    stripe.addCard(owner.accountId, { brand: 'visa', last4: '4242' });
  });
  after(async () => {
    await gw.stop();
    await stripe.stop();
  });

  async function active() {
    const instance = await newInstance(gw.api, owner);
    const sub = await gw.api('POST', `/instances/${instance.id}/subscribe`, { token: owner.jwt });
    expect(sub.status, sub.text).to.equal(200);
    return { instance, atStripe: stripe.subscriptionOfInstance(instance.id)! };
  }
  const cancelAtPeriodEnd = (subscriptionId: string, instanceId: string, cancel: boolean) =>
    JSON.stringify(stripe.event('customer.subscription.updated', { id: subscriptionId, object: 'subscription', status: 'active', cancel_at_period_end: cancel, metadata: { instance_id: instanceId } }));

  it('acknowledges or refuses, never 500, an event naming an instance id of 5,000 characters', async () => {
    const long = 'i'.repeat(5000);
    for (const payload of [
      cancelAtPeriodEnd('sub_x', long, true),
      JSON.stringify(stripe.event('customer.subscription.deleted', { id: 'sub_x', object: 'subscription', ended_at: nowS(), metadata: { instance_id: long } })),
      JSON.stringify(stripe.event('invoice.payment_failed', { id: 'in_x', object: 'invoice', parent: { subscription_details: { metadata: { instance_id: long } } }, lines: { data: [] } })),
      JSON.stringify({ ...stripe.event('invoice.paid', { id: 'in_x', object: 'invoice', parent: { subscription_details: { metadata: { instance_id: 'x' } } }, lines: { data: [{ period: { end: nowS() } }] } }), id: 'e'.repeat(5000) }),
    ]) {
      expect(await stripe.post(payload, stripe.sign(payload))).to.be.oneOf([200, 400]);
    }
  });

  it('refuses a signature whose timestamp is past the tolerance in the future', async () => {
    const { instance, atStripe } = await active();
    const payload = cancelAtPeriodEnd(atStripe.id, instance.id, true);
    expect(await stripe.post(payload, stripe.sign(payload, nowS() + 3600))).to.equal(400);
    expect(await stripe.post(payload, stripe.sign(payload, nowS() + 600))).to.equal(400);
    expect((await get(instance.id)).cancel_at).to.equal(null);
    // Within the tolerance, either way, it is taken.
    expect(await stripe.post(payload, stripe.sign(payload, nowS() + 30))).to.equal(200);
    await waitFor(async () => (await get(instance.id)).cancel_at !== null, 'scheduled');
  });

  it('applies each event id once: a cancellation replayed after a resume does not cancel again', async () => {
    const { instance, atStripe } = await active();
    const cancel = cancelAtPeriodEnd(atStripe.id, instance.id, true);
    const signature = stripe.sign(cancel);
    expect(await stripe.post(cancel, signature)).to.equal(200);
    await waitFor(async () => (await get(instance.id)).cancel_at !== null, 'scheduled');
    const resume = await gw.api('POST', `/instances/${instance.id}/resume-subscription`, { token: owner.jwt });
    expect(resume.status, resume.text).to.equal(200);
    expect(resume.body.cancel_at).to.equal(null);
    // The same bytes and signature again, well inside the five minutes.
    expect(await stripe.post(cancel, signature)).to.equal(200);
    expect(await stripe.post(cancel, stripe.sign(cancel))).to.equal(200);
    expect((await get(instance.id)).cancel_at).to.equal(null);
    const types = (await gw.gateway.events.readStream(`instance-${instance.id}`)).map((e) => e.type);
    expect(types.filter((t) => t === 'SubscriptionCancellationScheduled')).to.have.length(1);
  });
});
