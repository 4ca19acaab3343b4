import { expect } from 'chai';
import { newAccount, newInstance, startTestGateway, type TestGateway } from '../support/gateway.js';
import { newPhone, pairByQr, waitFor } from '../support/sandbox.js';
import { Receiver } from './support/receiver.js';

describe('webhook attempts carry the request id of what caused them', function () {
  this.timeout(20_000);
  let t: TestGateway;
  let rx: Receiver;
  before(async () => {
    rx = await new Receiver().start();
    t = await startTestGateway({ MESSAGING_NETWORK: 'sandbox' });
  });
  after(async () => {
    await t.stop();
    await rx.stop();
  });

  it('sends X-Request-Id: the id of the API call whose message the webhook tells', async () => {
    const owner = await newAccount(t.api);
    const { id } = await newInstance(t.api, owner);
    const me = await newPhone(t.api, owner);
    const them = await newPhone(t.api, owner);
    await pairByQr(t.api, owner, id, me.phone);
    expect((await t.api('POST', `/instances/${id}/webhook`, { token: owner.jwt, body: { webhookURL: rx.url, events: 'Message' } })).status).to.equal(200);
    const sent = await t.api('POST', `/instances/${id}/chat/send/text`, { token: owner.jwt, headers: { 'x-request-id': 'trace-7f3a-0001' }, body: { phone: them.phone, message: 'traced' } });
    expect(sent.status, sent.text).to.equal(200);
    expect(sent.headers.get('x-request-id')).to.equal('trace-7f3a-0001');
    await waitFor(() => rx.received.some((r) => r.body?.event?.Info?.ID === sent.body.data.message_id), 'the webhook of the sent message');
    const delivery = rx.received.find((r) => r.body?.event?.Info?.ID === sent.body.data.message_id);
    expect(delivery?.headers['x-request-id']).to.equal('trace-7f3a-0001');
  });
});
