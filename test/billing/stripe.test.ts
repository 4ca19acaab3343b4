/* eslint-disable @typescript-eslint/no-explicit-any -- test answers are read field by field */
import { expect } from 'chai';
import { expectError, newAccount, newInstance, startTestGateway, type TestAccount, type TestGateway } from '../support/gateway.js';
import { waitFor } from '../support/sandbox.js';
import { StripeServer } from '../servers/stripe/stripe-server.js';

const seconds = (s: number) => String(s / 86_400);
const SECRET_KEY = 'sk_test_gateway_0123456789';
const WEBHOOK_SECRET = 'whsec_stripe_test_secret_abcdef';

/** Issue 16 with BILLING_PROVIDER=stripe against a Stripe test server. */
describe('billing with Stripe (test server)', function () {
  this.timeout(30_000);
  let stripe: StripeServer;
  let gw: TestGateway;
  let owner: TestAccount;

  const get = async (id: string) => (await gw.api('GET', `/instances/${id}`, { token: owner.jwt })).body;
  const subscribe = (id: string) => gw.api('POST', `/instances/${id}/subscribe`, { token: owner.jwt });

  before(async () => {
    stripe = new StripeServer({ secretKey: SECRET_KEY, priceId: 'price_monthly', webhookSecret: WEBHOOK_SECRET, periodSeconds: 30 * 86_400 });
    await stripe.start();
    gw = await startTestGateway({
      BILLING_PROVIDER: 'stripe',
      STRIPE_SECRET_KEY: SECRET_KEY,
      STRIPE_PRICE_ID: 'price_monthly',
      STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
      STRIPE_API_BASE: stripe.url,
      // Long enough that a loaded machine answers the paid invoice inside it; short enough to wait out.
      BILLING_GRACE_DAYS: seconds(4),
    });
    stripe.webhookUrl = `${gw.gateway.url}/billing/stripe/webhook`;
    owner = await newAccount(gw.api);
  });
  after(async () => {
    await gw.stop();
    await stripe.stop();
  });

  it('refuses to subscribe without a payment method (402), then shows and charges the default card', async () => {
    const instance = await newInstance(gw.api, owner);
    expect((await gw.api('GET', '/account/billing', { token: owner.jwt })).body).to.deep.equal({ provider: 'stripe', payment_method: null });
    expectError(await subscribe(instance.id), 402, 'payment_required');
    expect((await get(instance.id)).billing_status).to.equal('TRIALING');
    expect(stripe.customers.size).to.equal(1);

    stripe.addCard(owner.accountId, { brand: 'visa', last4: '4242' });
    expect((await gw.api('GET', '/account/billing', { token: owner.jwt })).body).to.deep.equal({
      provider: 'stripe',
      payment_method: { brand: 'visa', last4: '4242' },
    });
    const sub = await subscribe(instance.id);
    expect(sub.status, sub.text).to.equal(200);
    const atStripe = stripe.subscriptionOfInstance(instance.id)!;
    expect(atStripe.customer).to.equal(stripe.customerOfAccount(owner.accountId)!.id);
    expect(sub.body).to.include({ billing_status: 'ACTIVE', cancel_at: null, expired_at: new Date(atStripe.periodEnd * 1000).toISOString() });
    expectError(await subscribe(instance.id), 409, 'conflict');
    // One customer per account, whatever the number of calls.
    expect(stripe.customers.size).to.equal(1);
  });

  it('starts one Stripe subscription for concurrent subscribe requests', async () => {
    const instance = await newInstance(gw.api, owner);
    const answers = await Promise.all([subscribe(instance.id), subscribe(instance.id), subscribe(instance.id)]);
    expect(answers.filter((a) => a.status === 200)).to.have.length.at.least(1);
    for (const a of answers) expect([200, 409], a.text).to.include(a.status);
    const created = [...stripe.subscriptions.values()].filter((s) => s.metadata.instance_id === instance.id);
    expect(created).to.have.length(1);
  });

  it('refuses with 402 when Stripe declines the card, and records nothing', async () => {
    const other = await newAccount(gw.api);
    const instance = await newInstance(gw.api, other);
    await gw.api('GET', '/account/billing', { token: other.jwt });
    stripe.addCard(other.accountId, { brand: 'mastercard', last4: '0341', declines: true });
    expectError(await gw.api('POST', `/instances/${instance.id}/subscribe`, { token: other.jwt }), 402, 'payment_required');
    const types = (await gw.gateway.events.readStream(`instance-${instance.id}`)).map((e) => e.type);
    expect(types).to.not.include('SubscriptionStarted');
  });

  it('cancels at period end and resumes through Stripe; the subscription deleted at period end makes it CANCELED', async () => {
    const instance = await newInstance(gw.api, owner);
    await subscribe(instance.id);
    const atStripe = stripe.subscriptionOfInstance(instance.id)!;

    const cancel = await gw.api('PUT', `/instances/${instance.id}/cancel`, { token: owner.jwt });
    expect(cancel.body).to.include({ billing_status: 'ACTIVE', cancel_at: new Date(atStripe.periodEnd * 1000).toISOString() });
    expect(atStripe.cancel_at_period_end).to.equal(true);
    const resume = await gw.api('POST', `/instances/${instance.id}/resume-subscription`, { token: owner.jwt });
    expect(resume.body.cancel_at).to.equal(null);
    expect(atStripe.cancel_at_period_end).to.equal(false);

    // The same, done in Stripe's portal.
    expect(await stripe.setCancelAtPeriodEnd(atStripe.id, true)).to.equal(200);
    await waitFor(async () => (await get(instance.id)).cancel_at !== null, 'scheduled at Stripe');
    expect(await stripe.setCancelAtPeriodEnd(atStripe.id, false)).to.equal(200);
    await waitFor(async () => (await get(instance.id)).cancel_at === null, 'resumed at Stripe');

    await gw.api('DELETE', `/instances/${instance.id}/cancel`, { token: owner.jwt });
    expect(await stripe.endPeriod(atStripe.id)).to.equal(200);
    await waitFor(async () => (await get(instance.id)).billing_status === 'CANCELED', 'canceled by Stripe');
    expect((await get(instance.id)).cancel_at).to.equal(new Date(atStripe.periodEnd * 1000).toISOString());
  });

  it("follows Stripe's invoices: paid renews, failed is PAST_DUE, paid again is ACTIVE, unpaid past the grace is EXPIRED", async () => {
    const instance = await newInstance(gw.api, owner);
    await subscribe(instance.id);
    const atStripe = stripe.subscriptionOfInstance(instance.id)!;
    const firstEnd = atStripe.periodEnd;

    expect(await stripe.renew(atStripe.id, true)).to.equal(200);
    await waitFor(async () => (await get(instance.id)).expired_at === new Date((firstEnd + 30 * 86_400) * 1000).toISOString(), 'renewed');

    expect(await stripe.renew(atStripe.id, false)).to.equal(200);
    await waitFor(async () => (await get(instance.id)).billing_status === 'PAST_DUE', 'past due');
    expect(await stripe.renew(atStripe.id, true)).to.equal(200);
    await waitFor(async () => (await get(instance.id)).billing_status === 'ACTIVE', 'paid again');

    expect(await stripe.renew(atStripe.id, false)).to.equal(200);
    await waitFor(async () => (await get(instance.id)).billing_status === 'PAST_DUE', 'past due again');
    // The grace is four seconds; then the timer expires it.
    await waitFor(async () => (await get(instance.id)).billing_status === 'EXPIRED', 'expired after the grace', 12_000);
    expectError(await gw.api('POST', `/instances/${instance.id}/session/restart`, { token: owner.jwt }), 402, 'payment_required');

    // Cancelling an expired instance ends it at once; subscribing again starts a new subscription.
    expect((await gw.api('PUT', `/instances/${instance.id}/cancel`, { token: owner.jwt })).body.billing_status).to.equal('CANCELED');
    const again = await subscribe(instance.id);
    expect(again.body.billing_status).to.equal('ACTIVE');
    expect(stripe.subscriptionOfInstance(instance.id)!.id).to.not.equal(atStripe.id);
    // The unpaid one was ended at Stripe, so only the new one charges.
    expect(atStripe.status).to.equal('canceled');
  });

  it('refuses unsigned, forged and stale webhook calls with 400 and changes nothing; a repeated event changes nothing twice', async () => {
    const instance = await newInstance(gw.api, owner);
    await subscribe(instance.id);
    const atStripe = stripe.subscriptionOfInstance(instance.id)!;
    const failed = JSON.stringify(stripe.event('invoice.payment_failed', stripe.invoice(atStripe, { start: atStripe.periodEnd, end: atStripe.periodEnd + 60 }, false)));
    const post = (signature: string | null) => stripe.post(failed, signature);

    expect(await post(null)).to.equal(400);
    expect(await post(stripe.sign(failed, undefined, 'whsec_not_the_secret'))).to.equal(400);
    expect(await post(stripe.sign(`${failed} `))).to.equal(400);
    expect(await post(stripe.sign(failed, Math.floor(Date.now() / 1000) - 600))).to.equal(400);
    expect(await post('t=1,v1=zz')).to.equal(400);
    const res = await gw.api('POST', '/billing/stripe/webhook', { raw: '{not json', headers: { 'stripe-signature': stripe.sign('{not json') } });
    expectError(res, 400, 'invalid_input');
    expect((await get(instance.id)).billing_status).to.equal('ACTIVE');

    const odd = JSON.stringify(stripe.event('invoice.paid', { id: 'in_x', object: 'invoice', parent: { subscription_details: { metadata: { instance_id: instance.id } } }, lines: { data: [{ period: { end: 'soon' } }] } }));
    expect(await stripe.post(odd, stripe.sign(odd))).to.equal(400);
    expect((await get(instance.id)).billing_status).to.equal('ACTIVE');

    expect(await post(stripe.sign(failed))).to.equal(200);
    expect(await post(stripe.sign(failed))).to.equal(200);
    await waitFor(async () => (await get(instance.id)).billing_status === 'PAST_DUE', 'past due');
    const types = (await gw.gateway.events.readStream(`instance-${instance.id}`)).map((e) => e.type);
    expect(types.filter((t) => t === 'PaymentFailed')).to.have.length(1);
  });

  it('keeps the Stripe key and webhook secret out of the log, the read models and the answers', async () => {
    const log = JSON.stringify(await gw.gateway.events.readAll(), (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
    expect(log).to.not.include(SECRET_KEY);
    expect(log).to.not.include(WEBHOOK_SECRET);
    const openapi = await gw.api('GET', '/openapi.json');
    expect(openapi.text).to.not.include(SECRET_KEY);
    expect(Object.keys(openapi.body.paths)).to.include.members(['/billing/stripe/webhook', '/account/billing', '/instances/{id}/subscribe', '/instances/{id}/resume-subscription']);
    // Every call to Stripe carried the key; none went elsewhere.
    expect(stripe.requests.every((r) => r.authorization === `Bearer ${SECRET_KEY}`)).to.equal(true);
  });
});
