/* eslint-disable @typescript-eslint/no-explicit-any -- test answers are read field by field */
import { expect } from 'chai';
import { expectError, newAccount, newInstance } from '../support/gateway.js';
import { useGateway } from '../support/use-gateway.js';
import { newPhone, waitFor } from '../support/sandbox.js';
import { fieldsOf, pairedInstance, phoneSends, recorded } from '../support/chats.js';

describe('chat/send/text, send/buttons, react and markread over the sandbox', () => {
  let me: { id: string; phone: string; jid: string };
  let peer: { id: string; phone: string; jid: string };

  const post = (id: string, path: string, body: unknown) => t.api('POST', `/instances/${id}/chat/${path}`, { token: owner.jwt, body });
  const inbox = async (phone: string) => (await t.api('GET', `/sandbox/phones/${phone}/inbox`, { token: owner.jwt })).body.messages as any[];

  const { t, owner } = useGateway({ MESSAGING_NETWORK: 'sandbox' });
  before(async () => {
    me = await pairedInstance(t, owner);
    // The peer phone has its own linked instance: what the phone sees, that instance records.
    peer = await pairedInstance(t, owner);
  });

  it('sends text to the phone, and records it as MessageSent', async () => {
    const res = await post(me.id, 'send/text', { phone: peer.phone, message: 'hello there' });
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.include({ code: 200, success: true });
    const id = res.body.data.message_id as string;
    expect(id).to.be.a('string').and.not.equal('');
    const got = (await inbox(peer.phone)).find((m) => m.message_id === id);
    expect(got).to.deep.include({ from: me.jid, chat: me.jid, type: 'text', text: 'hello there' });
    const sent = await recorded(t, me.id, 'MessageSent', (d) => d.message.id === id);
    expect(sent).to.deep.include({ origin: 'api' });
    expect(sent.message).to.deep.include({ chat: peer.jid, from_me: true, type: 'text', text: 'hello there' });
    // And the peer's instance received it.
    await recorded(t, peer.id, 'MessageReceived', (d) => d.message.id === id);
  });

  it('sends a reply to a message, and accepts a full jid as phone', async () => {
    const original = await phoneSends(t, owner, peer.phone, me.phone, { text: 'question?' });
    const res = await post(me.id, 'send/text', { phone: peer.jid, message: 'answer', reply_to: original });
    expect(res.status, res.text).to.equal(200);
    const got = (await inbox(peer.phone)).find((m) => m.message_id === res.body.data.message_id);
    expect(got).to.deep.include({ text: 'answer', reply_to: original });
  });

  it('sends buttons that reach the phone as buttons (no fallback on the sandbox)', async () => {
    const buttons = [{ id: 'yes', text: 'Yes' }, { id: 'no', text: 'No' }];
    const res = await post(me.id, 'send/buttons', { phone: peer.phone, message: 'Continue?', footer: 'reply below', buttons });
    expect(res.status, res.text).to.equal(200);
    expect(res.headers.get('x-fallback')).to.equal(null);
    const got = (await inbox(peer.phone)).find((m) => m.message_id === res.body.data.message_id);
    expect(got).to.deep.include({ type: 'buttons', text: 'Continue?' });
    expect(got.buttons).to.deep.equal({ footer: 'reply below', items: buttons });
    const sent = await recorded(t, me.id, 'MessageSent', (d) => d.message.id === res.body.data.message_id);
    expect(sent.message.buttons.items).to.deep.equal(buttons);
    expect(sent.fallback).to.equal(undefined);
    const minimal = await post(me.id, 'send/buttons', { phone: peer.phone, buttons: [{ id: '1', text: 'One' }] });
    expect(minimal.status, minimal.text).to.equal(200);
  });

  it('reacts to a message: the phone gets the reaction, and "" removes it', async () => {
    const target = await phoneSends(t, owner, peer.phone, me.phone, { text: 'like this' });
    await recorded(t, me.id, 'MessageReceived', (d) => d.message.id === target);
    const res = await post(me.id, 'react', { phone: peer.phone, message_id: target, reaction: '❤️' });
    expect(res.status, res.text).to.equal(200);
    const got = (await inbox(peer.phone)).find((m) => m.message_id === res.body.data.message_id);
    expect(got).to.deep.include({ type: 'reaction' });
    expect(got.reaction).to.deep.equal({ message_id: target, text: '❤️' });
    const removed = await post(me.id, 'react', { phone: peer.phone, message_id: target, reaction: '' });
    expect(removed.status, removed.text).to.equal(200);
    const removal = (await inbox(peer.phone)).find((m) => m.message_id === removed.body.data.message_id);
    expect(removal.reaction).to.deep.equal({ message_id: target, text: '' });
    await recorded(t, peer.id, 'MessageReceived', (d) => d.message.id === removed.body.data.message_id && d.message.reaction?.text === '');
    expectError(await post(me.id, 'react', { phone: peer.phone, message_id: 'NOSUCHMESSAGE', reaction: '👍' }), 404, 'not_found');
  });

  it('marks messages read: the sender sees Read, the account records ReadSelf', async () => {
    const ids = [await phoneSends(t, owner, peer.phone, me.phone, { text: 'one' }), await phoneSends(t, owner, peer.phone, me.phone, { text: 'two' })];
    const res = await post(me.id, 'markread', { phone: peer.phone, message_ids: ids });
    expect(res.status, res.text).to.equal(200);
    expect(res.body.data).to.deep.equal({});
    const seen = await recorded(t, peer.id, 'ReceiptReceived', (d) => d.state === 'Read' && ids.every((id) => d.message_ids.includes(id)));
    // From the sender's side, the chat is the one with the reader.
    expect(seen).to.deep.include({ chat: me.jid, sender: me.jid });
    await recorded(t, me.id, 'ReceiptReceived', (d) => d.state === 'ReadSelf' && d.chat === peer.jid);
  });

  it('answers 409 not_connected when the instance is not connected', async () => {
    const { id } = await newInstance(t.api, owner);
    for (const [path, body] of [
      ['send/text', { phone: peer.phone, message: 'x' }],
      ['send/buttons', { phone: peer.phone, buttons: [{ id: 'a', text: 'A' }] }],
      ['markread', { phone: peer.phone, message_ids: ['ABC'] }],
      ['react', { phone: peer.phone, message_id: 'ABC', reaction: '👍' }],
    ] as const) {
      expectError(await post(id, path, body), 409, 'not_connected');
    }
  });

  it('stops sending once logged out (409 not_connected)', async () => {
    const other = await pairedInstance(t, owner);
    const out = await t.api('POST', `/instances/${other.id}/session/logout`, { token: owner.jwt });
    expect(out.status, out.text).to.equal(200);
    await waitFor(async () => (await post(other.id, 'send/text', { phone: peer.phone, message: 'x' })).status === 409, 'not connected');
  });

  it('refuses bad input on every route with 400 naming the field', async () => {
    const cases: [string, unknown, string][] = [
      ['send/text', { message: 'x' }, 'phone'],
      ['send/text', { phone: 'abc', message: 'x' }, 'phone'],
      ['send/text', { phone: '123', message: 'x' }, 'phone'],
      ['send/text', { phone: peer.phone }, 'message'],
      ['send/text', { phone: peer.phone, message: '' }, 'message'],
      ['send/text', { phone: peer.phone, message: 7 }, 'message'],
      ['send/text', { phone: peer.phone, message: 'x', reply_to: 'bad id!' }, 'reply_to'],
      ['send/text', { phone: peer.phone, message: 'x', extra: 1 }, 'extra'],
      ['send/buttons', { phone: peer.phone }, 'buttons'],
      ['send/buttons', { phone: peer.phone, buttons: [] }, 'buttons'],
      ['send/buttons', { phone: peer.phone, buttons: [{ text: 'A' }] }, 'buttons.0.id'],
      ['send/buttons', { phone: peer.phone, buttons: [{ id: 'a' }] }, 'buttons.0.text'],
      ['send/buttons', { phone: peer.phone, buttons: [{ id: '', text: 'A' }] }, 'buttons.0.id'],
      ['send/buttons', { buttons: [{ id: 'a', text: 'A' }] }, 'phone'],
      ['send/buttons', { phone: peer.phone, buttons: [{ id: 'a', text: 'A' }], footer: 5 }, 'footer'],
      ['markread', { phone: peer.phone }, 'message_ids'],
      ['markread', { phone: peer.phone, message_ids: [] }, 'message_ids'],
      ['markread', { message_ids: ['A'] }, 'phone'],
      ['react', { phone: peer.phone, message_id: 'A' }, 'reaction'],
      ['react', { phone: peer.phone, reaction: '👍' }, 'message_id'],
      ['react', { message_id: 'A', reaction: '👍' }, 'phone'],
    ];
    for (const [path, body, field] of cases) {
      const res = await post(me.id, path, body);
      expectError(res, 400, 'invalid_input');
      expect(fieldsOf(res), `${path} ${JSON.stringify(body)}`).to.include(field);
    }
    const raw = await t.api('POST', `/instances/${me.id}/chat/send/text`, { token: owner.jwt, raw: '[1,2]' });
    expectError(raw, 400, 'invalid_input');
  });

  it('refuses a phone that is not on the network with 400 "not on WhatsApp" (CONTRACT.md, Webhooks)', async () => {
    expectError(await post(me.id, 'send/text', { phone: '5599000000000', message: 'x' }), 400, 'invalid_input');
    const stranger = await newPhone(t.api, await newAccount(t.api));
    const theirs = await post(me.id, 'send/text', { phone: stranger.phone, message: 'x' });
    expectError(theirs, 400, 'invalid_input');
    expect(theirs.body.error.message).to.match(/not on WhatsApp/);
  });
});
