/* eslint-disable @typescript-eslint/no-explicit-any -- answers are read field by field */
import { expect } from 'chai';
import { Value } from '@sinclair/typebox/value';
import { WebhookBodies } from '../../src/webhooks/bodies/schemas.js';
import { newInstance } from '../support/gateway.js';
import { eventData } from '../support/chats.js';
import { newPhone, pairByQr, waitFor } from '../support/sandbox.js';
import { useGateway } from '../support/use-gateway.js';
import { Receiver } from '../webhooks/support/receiver.js';

/**
 * Queued sends run one lane per chat (issue 27, finding 11), seen as a client sees them: a send
 * the network refuses for good is given up at once and told as ReadReceipt Failed with its code;
 * a send that fails for now is retried and holds only its own chat; a chat's long backlog never
 * hides another chat's send. Paced at 12 a minute (one each 5 s), so every send after the first queues.
 */
describe('queued sends: one lane per chat (sandbox, over HTTP)', function () {
  this.timeout(180_000);
  const { t, owner } = useGateway({
    MESSAGING_NETWORK: 'sandbox',
    SEND_RATE_PER_MIN: '12',
    SEND_JITTER_MS: '0',
    RATE_LIMIT_ACCOUNT_PER_S: '100000',
    RATE_LIMIT_INSTANCE_PER_S: '100000',
  });
  let rx: Receiver;
  beforeEach(async () => (rx = await new Receiver().start()));
  afterEach(async () => rx.stop());

  async function paired() {
    const { id } = await newInstance(t.api, owner, { webhook: rx.url, events_subscribe: ['ReadReceipt'] });
    const me = await newPhone(t.api, owner);
    await pairByQr(t.api, owner, id, me.phone);
    return id;
  }
  const send = async (id: string, phone: string, message: string) => {
    const res = await t.api('POST', `/instances/${id}/chat/send/text`, { token: owner.jwt, body: { phone, message } });
    expect(res.status, res.text).to.equal(200);
    return res.body.data as { message_id: string; status: string };
  };
  const inbox = async (phone: string) => (await t.api('GET', `/sandbox/phones/${phone}/inbox`, { token: owner.jwt })).body.messages as any[];
  const sentIds = async (id: string) => (await eventData(t, id, 'MessageSent')).map((d) => d.message.id as string);

  it('gives a queued send to an address not on WhatsApp up at once: ReadReceipt Failed with the code, and the message failed', async () => {
    const id = await paired();
    const peer = await newPhone(t.api, owner);
    expect((await send(id, peer.phone, 'first')).status).to.equal('sent');
    // A LID goes as given (no number check): the network finds nobody at the time of sending.
    const nobody = await send(id, '100000000000042@lid', 'to nobody');
    expect(nobody.status).to.equal('queued');
    const after = await send(id, peer.phone, 'after');
    await waitFor(() => rx.ofType('ReadReceipt').some((r) => r.body.event.MessageIDs.includes(nobody.message_id)), 'the Failed webhook', 15_000);
    const failed = rx.ofType('ReadReceipt').find((r) => r.body.event.MessageIDs.includes(nobody.message_id))!.body;
    expect(failed.state).to.equal('Failed');
    expect(failed.event.Chat).to.equal('100000000000042@lid');
    expect(failed.event.Error.code).to.equal(400);
    expect(failed.event.Error.reason).to.match(/not on WhatsApp/);
    expect([...Value.Errors(WebhookBodies.ReadReceipt, failed)].map((e) => `${e.path} ${e.message}`)).to.deep.equal([]);
    // Tried once, not retried: one SendAbandoned, and the send after it went out.
    const abandoned = (await eventData(t, id, 'SendAbandoned')).filter((d) => d.message_id === nobody.message_id);
    expect(abandoned).to.have.length(1);
    await waitFor(async () => (await inbox(peer.phone)).some((m) => m.message_id === after.message_id), 'the send after it');
    let message: any;
    await waitFor(async () => (message = (await t.api('GET', `/instances/${id}/messages/${nobody.message_id}`, { token: owner.jwt })).body.data)?.status === 'failed', 'failed in the read model');
    expect(message.error.code).to.equal(400);
    expect(message.error.reason).to.match(/not on WhatsApp/);
  });

  it('retries a send that timed out, holding only its chat: the other chat goes on, and the send goes out once', async () => {
    const id = await paired();
    const flaky = await newPhone(t.api, owner, { send_timeouts: 3 });
    const steady = await newPhone(t.api, owner);
    expect((await send(id, steady.phone, 'first')).status).to.equal('sent');
    const a = await send(id, flaky.phone, 'to the flaky phone');
    const b = await send(id, steady.phone, 'to the steady phone');
    expect([a.status, b.status]).to.deep.equal(['queued', 'queued']);
    // Three timeouts wait 1 s, 2 s and 4 s: the other chat's send is out long before.
    await waitFor(async () => (await inbox(flaky.phone)).some((m) => m.message_id === a.message_id), 'the retried send', 60_000);
    expect((await inbox(flaky.phone)).filter((m) => m.message_id === a.message_id)).to.have.length(1);
    await waitFor(async () => (await sentIds(id)).includes(a.message_id), 'its record');
    const order = await sentIds(id);
    expect(order.indexOf(b.message_id), 'the steady chat went first').to.be.within(0, order.indexOf(a.message_id));
    expect(await eventData(t, id, 'SendAbandoned')).to.deep.equal([]);
    expect(rx.ofType('ReadReceipt').filter((r) => r.body.state === 'Failed')).to.deep.equal([]);
  });

  it("does not hide another chat's send behind more than 1,000 waiting in one chat", async function () {
    // A thousand sends over HTTP: 10 s on a quiet embedded gateway, 100 s on the adapters of a busy machine.
    this.timeout(420_000);
    const id = await paired();
    const stuck = await newPhone(t.api, owner, { send_timeouts: 100_000 });
    const other = await newPhone(t.api, owner);
    expect((await send(id, other.phone, 'first')).status).to.equal('sent');
    const backlog = 1005;
    for (let i = 0; i < backlog; i += 25) {
      const batch = await Promise.all(Array.from({ length: Math.min(25, backlog - i) }, (_, j) => send(id, stuck.phone, `stuck ${i + j}`)));
      expect(batch.every((s) => s.status === 'queued')).to.equal(true);
    }
    const late = await send(id, other.phone, 'behind the backlog');
    expect(late.status).to.equal('queued');
    await waitFor(async () => (await inbox(other.phone)).some((m) => m.message_id === late.message_id), 'the other chat', 30_000);
    // The stuck chat still waits on its first send: nothing of it went, nothing was given up.
    expect(await inbox(stuck.phone)).to.deep.equal([]);
    expect(await eventData(t, id, 'SendAbandoned')).to.deep.equal([]);
  });
});
