/* eslint-disable @typescript-eslint/no-explicit-any -- test answers are read field by field */
import { expect } from 'chai';
import { expectError, newAccount, newInstance } from '../support/gateway.js';
import { useGateway } from '../support/use-gateway.js';
import { instanceOf, newPhone, pairByQr, waitFor } from '../support/sandbox.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Issue 17's state at a time: the log folded by the read model's fold equals what GET answered then. */
describe('GET /instances/{id}/history/state', function () {
  this.timeout(30_000);

  const { t: gw, owner } = useGateway({ MESSAGING_NETWORK: 'sandbox' });

  /** What GET answers now, and a moment after it that precedes whatever happens next. */
  const snapshot = async (id: string) => {
    const answer = (await gw.api('GET', `/instances/${id}`, { token: owner.jwt })).body;
    await sleep(5);
    const at = new Date().toISOString();
    await sleep(5);
    return { answer, at };
  };
  const stateAt = (id: string, at: string) => gw.api('GET', `/instances/${id}/history/state?at=${encodeURIComponent(at)}`, { token: owner.jwt });

  it('answers, at three moments of a scripted life, what GET /instances/{id} answered then', async () => {
    const beforeCreation = new Date().toISOString();
    await sleep(5);
    const instance = await newInstance(gw.api, owner, { name: 'first name' });
    expect((await gw.api('PATCH', `/instances/${instance.id}`, { token: owner.jwt, body: { name: 'second name' } })).status).to.equal(200);
    const renamed = await snapshot(instance.id);

    const hook = await gw.api('POST', `/instances/${instance.id}/webhook`, { token: owner.jwt, body: { webhookURL: 'http://127.0.0.1:9/hook', events: 'Message,Connected' } });
    expect(hook.status, hook.text).to.equal(200);
    const phone = await newPhone(gw.api, owner, { push_name: 'Ana' });
    await pairByQr(gw.api, owner, instance.id, phone.phone);
    await waitFor(async () => (await instanceOf(gw.api, owner, instance.id)).whatsapp_push_name === 'Ana', 'paired with its profile');
    const paired = await snapshot(instance.id);

    expect((await gw.api('POST', `/instances/${instance.id}/subscribe`, { token: owner.jwt })).status).to.equal(200);
    expect((await gw.api('PUT', `/instances/${instance.id}/cancel`, { token: owner.jwt })).status).to.equal(200);
    const canceling = await snapshot(instance.id);

    expect(renamed.answer.name).to.equal('second name');
    expect(paired.answer.connected).to.equal(true);
    expect(canceling.answer).to.include({ billing_status: 'ACTIVE' });
    expect(canceling.answer.cancel_at).to.be.a('string');
    for (const { answer, at } of [renamed, paired, canceling]) {
      const res = await stateAt(instance.id, at);
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.equal(answer);
      expect(res.body).to.not.have.property('token');
    }
    expectError(await stateAt(instance.id, beforeCreation), 404, 'not_found');
  });

  it('refuses a bad time with 400, other owners with 403, and the token pair with 401', async () => {
    const instance = await newInstance(gw.api, owner);
    for (const at of ['yesterday', '', '2026-13-45T99:00:00Z']) expectError(await stateAt(instance.id, at), 400, 'invalid_input');
    expectError(await gw.api('GET', `/instances/${instance.id}/history/state`, { token: owner.jwt }), 400, 'invalid_input');
    const stranger = await newAccount(gw.api);
    expectError(await gw.api('GET', `/instances/${instance.id}/history/state?at=${new Date().toISOString()}`, { token: stranger.jwt }), 403, 'forbidden');
    const pair = { 'x-instance-token': instance.token, 'x-client-token': owner.clientToken };
    expectError(await gw.api('GET', `/instances/${instance.id}/history/state?at=${new Date().toISOString()}`, { headers: pair }), 401, 'unauthorized');
  });
});
