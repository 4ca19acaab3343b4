/* eslint-disable @typescript-eslint/no-explicit-any -- answers are read field by field */
import { expect } from 'chai';
import { newAccount, startTestGateway, type TestAccount, type TestGateway } from '../support/gateway.js';
import { pairedInstance, phoneSends } from '../support/chats.js';
import { newPhone, waitFor } from '../support/sandbox.js';

/**
 * Issue 18: a person the account already has two chats with, one by phone number and one by LID
 * (written to by number, then writing by LID alone before the network shares the pair), is one
 * chat in GET /instances/{id}/chats once the pair is known (SANDBOX.md, LID addressing).
 */
describe('a chat seen under both ids is one chat (sandbox, over HTTP)', function () {
  this.timeout(30_000);
  let t: TestGateway;
  let owner: TestAccount;
  before(async () => {
    t = await startTestGateway({ MESSAGING_NETWORK: 'sandbox' });
    owner = await newAccount(t.api);
  });
  after(async () => t.stop());

  const chats = async (id: string) => (await t.api('GET', `/instances/${id}/chats?page=1&page_size=50`, { token: owner.jwt })).body;

  it('merges the phone chat and the LID chat when the pair is learned: counts added, the newest message and name kept', async () => {
    const me = await pairedInstance(t, owner);
    const hidden: any = await newPhone(t.api, owner, { push_name: 'Hidden', addressing: 'lid' });
    // We write first, by number: a chat under the phone jid.
    const sent = await t.api('POST', `/instances/${me.id}/chat/send/text`, { token: owner.jwt, body: { phone: hidden.phone, message: 'hello by number' } });
    expect(sent.status, sent.text).to.equal(200);
    // They answer by LID alone, twice: a second chat, under the LID.
    await phoneSends(t, owner, hidden.phone, me.phone, { text: 'by lid alone', lid_only: true });
    await phoneSends(t, owner, hidden.phone, me.phone, { text: 'still by lid', lid_only: true });
    await waitFor(async () => (await chats(me.id)).content.some((c: any) => c.jid === hidden.lid && c.messages_unread === 2), 'the LID chat');
    const before = await chats(me.id);
    expect(before.content.map((c: any) => c.jid).sort()).to.deep.equal([hidden.jid, hidden.lid].sort());

    // The network now sends the phone jid beside the LID: one person, one chat.
    await phoneSends(t, owner, hidden.phone, me.phone, { text: 'with my number' });
    await waitFor(async () => (await chats(me.id)).content.some((c: any) => c.messages_unread === 3), 'the merged chat');
    const after = await chats(me.id);
    expect(after.total).to.equal(1);
    expect(after.content).to.have.length(1);
    expect(after.content[0]).to.include({ jid: hidden.jid, phone: hidden.phone, name: 'Hidden', messages_unread: 3 });

    // Our reply by number reads that one chat; nothing splits it again.
    const reply = await t.api('POST', `/instances/${me.id}/chat/send/text`, { token: owner.jwt, body: { phone: hidden.phone, message: 'got it' } });
    expect(reply.status, reply.text).to.equal(200);
    await waitFor(async () => (await chats(me.id)).content[0]?.messages_unread === 0, 'the chat read by our reply');
    const last = await chats(me.id);
    expect(last.total).to.equal(1);
    expect(last.content[0].jid).to.equal(hidden.jid);
  });
});
