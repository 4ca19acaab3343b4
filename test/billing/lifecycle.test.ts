/* eslint-disable @typescript-eslint/no-explicit-any -- test answers are read field by field */
import { expect } from 'chai';
import { expectError, newAccount, newInstance } from '../support/gateway.js';
import { useGateway } from '../support/use-gateway.js';
import { newPhone, pairByQr, status, waitFor } from '../support/sandbox.js';

const seconds = (s: number) => String(s / 86_400);

/** Issue 16 over HTTP with the `none` provider: trial, subscription, renewal, cancellation, resume. */
describe('billing lifecycle over HTTP (provider none)', function () {
  this.timeout(30_000);

  const get = async (id: string) => (await gw.api('GET', `/instances/${id}`, { token: owner.jwt })).body;
  const billingOf = async (id: string) => (await get(id)).billing_status as string;

  // A trial of 1.5 s and a paid period of 3 s; the grace does not matter with `none`.
  const { t: gw, owner } = useGateway({ MESSAGING_NETWORK: 'sandbox', TRIAL_DAYS: seconds(1.5), BILLING_PERIOD_DAYS: seconds(3), BILLING_GRACE_DAYS: seconds(1) });

  it('ends a trial without a subscription as EXPIRED: acting routes answer 402, reads keep answering', async () => {
    const instance = await newInstance(gw.api, owner);
    expect(instance.billing_status).to.equal('TRIALING');
    const trialMs = Date.parse(instance.expired_at as string) - Date.parse(instance.created_at as string);
    expect(trialMs).to.equal(1500);
    await waitFor(async () => (await billingOf(instance.id)) === 'EXPIRED', 'trial expired');
    expect((await get(instance.id)).expired_at).to.equal(instance.expired_at);

    for (const [method, path, body] of [
      ['GET', 'session/qr', undefined],
      ['GET', 'session/paircode/5511999990000', undefined],
      ['POST', 'session/restart', undefined],
      ['POST', 'chat/send/text', { phone: '5511999990000', message: 'hi' }],
      ['POST', 'chat/archive', { phone: '5511999990000', archived: true }],
      ['POST', 'webhook', { webhookURL: 'http://127.0.0.1:9/x', events: 'All' }],
      ['POST', 'webhook/secret/rotate', undefined],
      ['PATCH', '', { name: 'renamed' }],
    ] as const) {
      const res = await gw.api(method, `/instances/${instance.id}${path ? `/${path}` : ''}`, { token: owner.jwt, ...(body ? { body } : {}) });
      expectError(res, 402, 'payment_required');
    }
    for (const path of ['', '/session/status', '/webhook', '/chats', '/webhook/deliveries']) {
      const res = await gw.api('GET', `/instances/${instance.id}${path}`, { token: owner.jwt });
      expect(res.status, `${path}: ${res.text}`).to.equal(200);
    }
    const listed = await gw.api('POST', '/instances/list', { token: owner.jwt, body: { filter: { billing_status: 'EXPIRED' } } });
    expect(listed.body.content.map((i: any) => i.id)).to.include(instance.id);

    // Subscribing again lifts it.
    const subscribed = await gw.api('POST', `/instances/${instance.id}/subscribe`, { token: owner.jwt });
    expect(subscribed.status, subscribed.text).to.equal(200);
    expect(subscribed.body.billing_status).to.equal('ACTIVE');
    const rename = await gw.api('PATCH', `/instances/${instance.id}`, { token: owner.jwt, body: { name: 'renamed' } });
    expect(rename.status, rename.text).to.equal(200);
  });

  it('subscribes, refuses a second subscribe, schedules and resumes a cancellation, renews, then cancels at cancel_at', async () => {
    const instance = await newInstance(gw.api, owner);
    const before = Date.now();
    const sub = await gw.api('POST', `/instances/${instance.id}/subscribe`, { token: owner.jwt });
    expect(sub.status, sub.text).to.equal(200);
    expect(Object.keys(sub.body)).to.not.include('token');
    expect(sub.body).to.include({ billing_status: 'ACTIVE', cancel_at: null });
    const periodEnd = Date.parse(sub.body.expired_at);
    expect(periodEnd - before).to.be.within(3000, 3000 + (Date.now() - before));
    expectError(await gw.api('POST', `/instances/${instance.id}/subscribe`, { token: owner.jwt }), 409, 'conflict');
    expectError(await gw.api('POST', `/instances/${instance.id}/resume-subscription`, { token: owner.jwt }), 409, 'conflict');

    const cancel = await gw.api('DELETE', `/instances/${instance.id}/cancel`, { token: owner.jwt });
    expect(cancel.status, cancel.text).to.equal(200);
    expect(cancel.body).to.include({ billing_status: 'ACTIVE', cancel_at: sub.body.expired_at });
    const resumed = await gw.api('POST', `/instances/${instance.id}/resume-subscription`, { token: owner.jwt });
    expect(resumed.body).to.include({ billing_status: 'ACTIVE', cancel_at: null });

    // `none` renews every period by itself.
    await waitFor(async () => Date.parse((await get(instance.id)).expired_at) > periodEnd, 'renewed', 8000);
    const renewed = await get(instance.id);
    expect(Date.parse(renewed.expired_at) - periodEnd).to.equal(3000);
    expect(renewed.billing_status).to.equal('ACTIVE');

    const scheduled = await gw.api('PUT', `/instances/${instance.id}/cancel`, { token: owner.jwt });
    expect(scheduled.body).to.include({ billing_status: 'ACTIVE', cancel_at: renewed.expired_at });
    await waitFor(async () => (await billingOf(instance.id)) === 'CANCELED', 'canceled at cancel_at', 8000);
    const canceled = await get(instance.id);
    expect(canceled.cancel_at).to.equal(renewed.expired_at);
    expectError(await gw.api('PUT', `/instances/${instance.id}/cancel`, { token: owner.jwt }), 409, 'conflict');
    expectError(await gw.api('POST', `/instances/${instance.id}/resume-subscription`, { token: owner.jwt }), 409, 'conflict');

    const again = await gw.api('POST', `/instances/${instance.id}/subscribe`, { token: owner.jwt });
    expect(again.body).to.include({ billing_status: 'ACTIVE', cancel_at: null });
  });

  it('answers the billing routes to the owner JWT only', async () => {
    const instance = await newInstance(gw.api, owner);
    const stranger = await newAccount(gw.api);
    expectError(await gw.api('POST', `/instances/${instance.id}/subscribe`, { token: stranger.jwt }), 403, 'forbidden');
    const pair = { 'x-instance-token': instance.token, 'x-client-token': owner.clientToken };
    expectError(await gw.api('POST', `/instances/${instance.id}/subscribe`, { headers: pair }), 401, 'unauthorized');
    expectError(await gw.api('POST', `/instances/${instance.id}/resume-subscription`, { headers: pair }), 401, 'unauthorized');
    expectError(await gw.api('GET', '/account/billing'), 401, 'unauthorized');
    const billing = await gw.api('GET', '/account/billing', { token: owner.jwt });
    expect(billing.body).to.deep.equal({ provider: 'none', payment_method: null });
  });

  it('describes billing in the OpenAPI document: routes, their refusals, the statuses', async () => {
    const { paths } = (await gw.api('GET', '/openapi.json')).body;
    expect(Object.keys(paths['/instances/{id}/subscribe'].post.responses)).to.include.members(['200', '401', '402', '403', '404', '409']);
    expect(Object.keys(paths['/instances/{id}/resume-subscription'].post.responses)).to.include.members(['200', '409']);
    expect(Object.keys(paths['/instances/{id}/cancel'].put.responses)).to.include('409');
    expect(paths['/account/billing'].get.responses['200'].content['application/json'].schema.required).to.deep.equal(['provider', 'payment_method']);
    for (const [path, method] of [
      ['/instances/{id}/session/qr', 'get'],
      ['/instances/{id}/session/restart', 'post'],
      ['/instances/{id}/chat/send/text', 'post'],
      ['/instances/{id}/chat/archive', 'post'],
      ['/instances/{id}/webhook', 'post'],
      ['/instances/{id}', 'patch'],
    ] as const) {
      expect(paths[path][method].responses, `${method} ${path}`).to.have.property('402');
    }
    for (const [path, method] of [
      ['/instances/{id}', 'get'],
      ['/instances/{id}/session/status', 'get'],
      ['/instances/{id}/webhook', 'get'],
    ] as const) {
      expect(paths[path][method].responses, `${method} ${path}`).to.not.have.property('402');
    }
    const state = paths['/instances/{id}/history/state'].get;
    expect(state.parameters.map((p: any) => p.name)).to.deep.equal(['id', 'at']);
    const instance = paths['/instances/{id}'].get.responses['200'].content['application/json'].schema;
    expect(instance.properties.billing_status.anyOf.map((s: any) => s.const)).to.deep.equal(['TRIALING', 'ACTIVE', 'PAST_DUE', 'EXPIRED', 'CANCELED']);
  });

  it('stops the session of a lapsed instance and delivers no webhook for what follows; subscribing brings both back', async () => {
    const instance = await newInstance(gw.api, owner);
    await gw.api('POST', `/instances/${instance.id}/subscribe`, { token: owner.jwt });
    const phone = await newPhone(gw.api, owner);
    // Nothing listens on the port: deliveries are recorded and then fail, which is all this needs.
    const hook = await gw.api('POST', `/instances/${instance.id}/webhook`, { token: owner.jwt, body: { webhookURL: 'http://127.0.0.1:9/hook', events: 'All' } });
    expect(hook.status, hook.text).to.equal(200);
    await pairByQr(gw.api, owner, instance.id, phone.phone);
    const types = async () => ((await gw.api('GET', `/instances/${instance.id}/webhook/deliveries?page_size=100`, { token: owner.jwt })).body.content as any[]).map((d) => d.type);
    await waitFor(async () => (await types()).includes('Connected'), 'Connected delivered');

    // An ACTIVE subscription cancels at its period's end: the timer makes it CANCELED.
    await gw.api('PUT', `/instances/${instance.id}/cancel`, { token: owner.jwt });
    await waitFor(async () => (await billingOf(instance.id)) === 'CANCELED', 'canceled', 8000);
    await waitFor(async () => (await status(gw.api, owner, instance.id)).connected === false, 'session stopped');
    const afterLapse = await types();
    expect(afterLapse.filter((t) => t === 'Disconnected')).to.deep.equal([]);

    // The paired session comes back by itself.
    await gw.api('POST', `/instances/${instance.id}/subscribe`, { token: owner.jwt });
    await waitFor(async () => (await status(gw.api, owner, instance.id)).connected === true, 'session back');
    await waitFor(async () => (await types()).filter((t) => t === 'Connected').length === 2, 'Connected delivered again');
  });
});
