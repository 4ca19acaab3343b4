/* eslint-disable @typescript-eslint/no-explicit-any -- test answers are read field by field */
import { expect } from 'chai';
import { newInstance } from '../support/gateway.js';
import { useGateway } from '../support/use-gateway.js';
import { newPhone, pairByQr, sessionEvents, waitFor, waitForEvent } from '../support/sandbox.js';

/** The instance settings that act on the session: auto_read_messages and reject_calls. */
describe('session settings take effect', function () {
  this.timeout(20_000);

  const { t: gw, owner } = useGateway({ MESSAGING_NETWORK: 'sandbox' });

  /** An instance paired with a fresh phone. */
  async function paired(settings: Record<string, unknown> = {}) {
    const instance = await newInstance(gw.api, owner, settings);
    const phone = await newPhone(gw.api, owner);
    await pairByQr(gw.api, owner, instance.id, phone.phone);
    return { instance, phone };
  }

  const send = async (from: string, to: string, text: string) => {
    const res = await gw.api('POST', `/sandbox/phones/${from}/messages`, { token: owner.jwt, body: { to, text } });
    expect(res.status, res.text).to.equal(201);
    return res.body.message_id as string;
  };

  it('auto_read_messages: incoming messages are marked read, and the sender sees a Read receipt', async () => {
    const reader = await paired({ auto_read_messages: true });
    const sender = await paired();
    const id = await send(sender.phone.phone, reader.phone.phone, 'read me');
    const receipt = await waitForEvent(gw.gateway, sender.instance.id, (e) => e.type === 'ReceiptReceived', 'read receipt');
    expect(receipt.data).to.include({ state: 'Read', chat: reader.phone.jid, sender: reader.phone.jid });
    expect(receipt.data.message_ids).to.deep.equal([id]);
    // The reader's own copy is read too: a later history sync of that phone counts no unread.
    await gw.api('POST', `/instances/${reader.instance.id}/session/logout`, { token: owner.jwt });
    const again = await newInstance(gw.api, owner);
    await pairByQr(gw.api, owner, again.id, reader.phone.phone);
    const history = await waitForEvent(gw.gateway, again.id, (e) => e.type === 'HistorySyncReceived', 'history');
    expect(history.data.chats.find((c: any) => c.jid === sender.phone.jid)?.unread_count).to.equal(0);
  });

  it('leaves messages unread when auto_read_messages is off', async () => {
    const reader = await paired();
    const sender = await paired();
    await send(sender.phone.phone, reader.phone.phone, 'do not read me');
    await waitForEvent(gw.gateway, reader.instance.id, (e) => e.type === 'MessageReceived', 'message');
    // Give a wrongly sent receipt time to arrive.
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect((await sessionEvents(gw.gateway, sender.instance.id)).some((e) => e.type === 'ReceiptReceived')).to.equal(false);
  });

  it('auto-reads in both directions at once without stalling either session', async () => {
    const a = await paired({ auto_read_messages: true });
    const b = await paired({ auto_read_messages: true });
    await Promise.all([send(a.phone.phone, b.phone.phone, 'ping'), send(b.phone.phone, a.phone.phone, 'pong')]);
    for (const side of [a, b]) {
      await waitForEvent(gw.gateway, side.instance.id, (e) => e.type === 'ReceiptReceived' && e.data.state === 'Read', 'read receipt');
    }
  });

  it('PATCH auto_read_messages takes effect on the live session', async () => {
    const reader = await paired();
    const sender = await paired();
    const patch = await gw.api('PATCH', `/instances/${reader.instance.id}`, { token: owner.jwt, body: { name: 'reader', auto_read_messages: true } });
    expect(patch.status, patch.text).to.equal(200);
    await send(sender.phone.phone, reader.phone.phone, 'now read me');
    await waitForEvent(gw.gateway, sender.instance.id, (e) => e.type === 'ReceiptReceived' && e.data.state === 'Read', 'read receipt');
  });

  it('reject_calls: a call to the instance is rejected, the caller sees it, CallRejected is logged', async () => {
    const callee = await paired({ reject_calls: true });
    const caller = await newPhone(gw.api, owner);
    const call = await gw.api('POST', `/sandbox/phones/${caller.phone}/call`, { token: owner.jwt, body: { to: callee.phone.phone } });
    expect(call.status, call.text).to.equal(201);
    expect(call.body.call_id).to.match(/^[0-9A-F]{32}$/);
    await waitFor(async () => {
      const log = await gw.api('GET', `/sandbox/phones/${caller.phone}/calls`, { token: owner.jwt });
      return log.body.calls[0]?.status === 'rejected';
    }, 'call rejected');
    const log = await gw.api('GET', `/sandbox/phones/${caller.phone}/calls`, { token: owner.jwt });
    expect(log.body.calls).to.have.length(1);
    expect(log.body.calls[0]).to.include({ call_id: call.body.call_id, from: caller.jid, to: callee.phone.jid, status: 'rejected' });
    const logged = await waitForEvent(gw.gateway, callee.instance.id, (e) => e.type === 'CallRejected', 'CallRejected');
    expect(logged.data).to.deep.equal({ call_id: call.body.call_id, from: caller.jid });
  });

  it('lets calls ring when reject_calls is off', async () => {
    const callee = await paired();
    const caller = await newPhone(gw.api, owner);
    await gw.api('POST', `/sandbox/phones/${caller.phone}/call`, { token: owner.jwt, body: { to: callee.phone.phone } });
    await new Promise((resolve) => setTimeout(resolve, 150));
    const log = await gw.api('GET', `/sandbox/phones/${caller.phone}/calls`, { token: owner.jwt });
    expect(log.body.calls.map((c: any) => c.status)).to.deep.equal(['ringing']);
    expect((await sessionEvents(gw.gateway, callee.instance.id)).some((e) => e.type === 'CallRejected')).to.equal(false);
  });

  it('refuses calls to a group, to itself, to unknown phones', async () => {
    const caller = await newPhone(gw.api, owner);
    const cases: [unknown, number][] = [
      ['120363000000000001@g.us', 400],
      [caller.phone, 400],
      ['5599000000001', 404],
      ['not a phone', 400],
    ];
    for (const [to, code] of cases) {
      const res = await gw.api('POST', `/sandbox/phones/${caller.phone}/call`, { token: owner.jwt, body: { to } });
      expect(res.status, `${String(to)}: ${res.text}`).to.equal(code);
      if (code === 400) expect(res.body.error.details[0].field).to.equal('to');
    }
  });
});
