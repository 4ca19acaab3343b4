/* eslint-disable @typescript-eslint/no-explicit-any -- test answers are read field by field */
import { expect } from 'chai';
import { useGateway } from '../support/use-gateway.js';
import { newPhone } from '../support/sandbox.js';
import { eventData, pairedInstance, phoneSends, recorded } from '../support/chats.js';

/**
 * Blocking as the network does it (SANDBOX.md, `GET /sandbox/accounts/{phone}`): a blocked person
 * can still send, the network takes it, and nothing reaches whoever blocked them: no message, no
 * status post. Each check waits for a later message that does arrive, so "never arrived" is not a
 * guess about timing.
 */
describe('blocking on the sandbox, over HTTP', function () {
  this.timeout(60_000);
  const { t, owner } = useGateway({ MESSAGING_NETWORK: 'sandbox', RECEIVE_STATUS: 'true' });
  const api = (method: string, path: string, body?: unknown) => t.api(method, path, { token: owner.jwt, ...(body === undefined ? {} : { body }) });
  const block = async (instanceId: string, phone: string, blocked: boolean) => {
    const res = await api('POST', `/instances/${instanceId}/contacts/block`, { phone, blocked });
    expect(res.status, res.text).to.equal(200);
  };
  const inboxIds = async (phone: string) => ((await api('GET', `/sandbox/phones/${phone}/inbox`)).body.messages as any[]).map((m) => m.message_id);
  const received = async (instanceId: string) => (await eventData(t, instanceId, 'MessageReceived')).map((d) => d.message.id);
  let friend: { phone: string; jid: string };
  let me: { id: string; phone: string; jid: string };

  before(async () => {
    friend = await newPhone(t.api, owner, { push_name: 'Friend' });
    const mine = await newPhone(t.api, owner, { push_name: 'Me', contacts: [friend.phone] });
    me = await pairedInstance(t, owner, mine.phone);
  });

  it("a blocked person's messages are taken by the network and never reach the account; after unblocking they do", async () => {
    await block(me.id, friend.phone, true);
    const spam = await phoneSends(t, owner, friend.phone, me.phone, { text: 'buy now' });
    expect(spam).to.be.a('string');
    await block(me.id, friend.phone, false);
    const hello = await phoneSends(t, owner, friend.phone, me.phone, { text: 'hello again' });
    await recorded(t, me.id, 'MessageReceived', (d) => d.message.id === hello);
    expect(await received(me.id)).to.not.include(spam);
    const inbox = await inboxIds(me.phone);
    expect(inbox).to.include(hello);
    expect(inbox).to.not.include(spam);
  });

  it("an instance's send to an account that blocked its phone is accepted and never delivered", async () => {
    const sender = await pairedInstance(t, owner);
    await block(me.id, sender.phone, true);
    const first = await api('POST', `/instances/${sender.id}/chat/send/text`, { phone: me.phone, message: 'are you there?' });
    expect(first.status, first.text).to.equal(200);
    const lost = first.body.data.message_id as string;
    await block(me.id, sender.phone, false);
    const second = await api('POST', `/instances/${sender.id}/chat/send/text`, { phone: me.phone, message: 'hello?' });
    expect(second.status, second.text).to.equal(200);
    await recorded(t, me.id, 'MessageReceived', (d) => d.message.id === second.body.data.message_id);
    expect(await received(me.id)).to.not.include(lost);
    expect(await inboxIds(me.phone)).to.not.include(lost);
    // The sender sees no delivery: nobody on the network received it.
    expect((await eventData(t, sender.id, 'ReceiptReceived')).some((r) => r.message_ids.includes(lost))).to.equal(false);
  });

  it("status posts: a blocked person's post does not reach the account, and the account's posts do not reach who blocked it", async () => {
    await block(me.id, friend.phone, true);
    const hidden = await api('POST', `/sandbox/phones/${friend.phone}/status`, { text: 'hidden day' });
    expect(hidden.status, hidden.text).to.equal(201);
    await block(me.id, friend.phone, false);
    const seen = await api('POST', `/sandbox/phones/${friend.phone}/status`, { text: 'seen day' });
    await recorded(t, me.id, 'MessageReceived', (d) => d.message.id === seen.body.message_id && d.message.chat === 'status@broadcast');
    expect(await received(me.id)).to.not.include(hidden.body.message_id);

    // Two people, one of whom (an instance's phone) blocked the account: only the other sees the post.
    const blocker = await pairedInstance(t, owner);
    const reader = await pairedInstance(t, owner);
    await block(blocker.id, me.phone, true);
    const post = await api('POST', `/instances/${me.id}/status/send`, { text: 'we are open', recipients: [blocker.phone, reader.phone] });
    expect(post.status, post.text).to.equal(200);
    const id = post.body.data.message_id as string;
    expect((await api('GET', `/sandbox/phones/${reader.phone}/statuses`)).body.statuses.map((s: any) => s.message_id)).to.deep.equal([id]);
    expect((await api('GET', `/sandbox/phones/${blocker.phone}/statuses`)).body.statuses).to.deep.equal([]);
    await recorded(t, reader.id, 'MessageReceived', (d) => d.message.id === id);
    // The blocker's instance was handed the post before the reader's, or never: it is not there.
    expect(await received(blocker.id)).to.not.include(id);
  });
});
