/* eslint-disable @typescript-eslint/no-explicit-any -- answers and bodies are read field by field */
import { expect } from 'chai';
import { expectError, newAccount, newInstance, startTestGateway, type TestAccount, type TestGateway } from '../support/gateway.js';
import { chatList } from '../support/chats.js';
import { newPhone, pairByQr, sessionEvents, waitFor, waitForEvent } from '../support/sandbox.js';
import { Receiver } from '../webhooks/support/receiver.js';

/**
 * What an integrator sees of the real network's behaviours (SANDBOX.md's last section), over HTTP:
 * status posts, LID-addressed people, numbers not on the network and the Brazilian ninth digit,
 * edits, deletions and the other message types, through webhooks and the chat list.
 */
describe('behaviours of the real network, over HTTP (sandbox)', function () {
  this.timeout(30_000);
  let gw: TestGateway;
  let owner: TestAccount;
  let rx: Receiver;
  let seq = 0;

  before(async () => {
    rx = await new Receiver().start();
    gw = await startTestGateway({ MESSAGING_NETWORK: 'sandbox' });
    owner = await newAccount(gw.api);
  });
  after(async () => {
    await gw.stop();
    await rx.stop();
  });

  /** A Brazilian-looking number unique to this run: 55, area 21, and `local` digits. */
  const brazilian = (withNinth: boolean) => {
    seq += 1;
    const tail = `${String(process.pid % 1000).padStart(3, '0')}${String(seq).padStart(4, '0')}`;
    return withNinth ? `55219${'8'}${tail}` : `5521${'8'}${tail}`;
  };

  async function pairedWithHook(phoneBody: Record<string, unknown> = {}, instanceBody: Record<string, unknown> = {}) {
    const instance = await newInstance(gw.api, owner, instanceBody);
    const phone = await newPhone(gw.api, owner, phoneBody);
    const hook = await gw.api('POST', `/instances/${instance.id}/webhook`, { token: owner.jwt, body: { webhookURL: rx.url, events: 'All' } });
    expect(hook.status, hook.text).to.equal(200);
    await pairByQr(gw.api, owner, instance.id, phone.phone);
    return { instance, phone };
  }
  const send = async (from: string, body: Record<string, unknown>) => {
    const res = await gw.api('POST', `/sandbox/phones/${from}/messages`, { token: owner.jwt, body });
    expect(res.status, res.text).to.equal(201);
    return res.body.message_id as string;
  };
  const hookFor = async (instanceId: string, messageId: string) => {
    let found: any;
    await waitFor(() => (found = rx.received.find((r) => r.body.instance_id === instanceId && r.body.event?.Info?.ID === messageId)) !== undefined, `webhook of ${messageId}`, 10_000);
    return found.body;
  };

  describe('status posts', () => {
    it('are neither delivered nor listed as chats by default, and never auto-read', async () => {
      const poster = await newPhone(gw.api, owner, { push_name: 'Poster' });
      const me = await pairedWithHook({ contacts: [poster.phone] }, { auto_read_messages: true });
      const post = await gw.api('POST', `/sandbox/phones/${poster.phone}/status`, { token: owner.jwt, body: { text: 'my day' } });
      expect(post.status, post.text).to.equal(201);
      // A message after it: once that is delivered, the status would have been too.
      const after = await send(poster.phone, { to: me.phone.phone, text: 'after the status' });
      await hookFor(me.instance.id, after);
      const events = await sessionEvents(gw.gateway, me.instance.id);
      expect(events.some((e) => JSON.stringify(e.data).includes('status@broadcast'))).to.equal(false);
      expect(rx.received.some((r) => r.body.event?.Info?.Chat === 'status@broadcast')).to.equal(false);
      const chats = await chatList(gw, owner, me.instance.id);
      expect(chats.content.map((c: any) => c.jid)).to.deep.equal([poster.jid]);
      expect(post.body.message_id).to.be.a('string');
    });

    it('arrive on status@broadcast with RECEIVE_STATUS=true', async () => {
      const other = await startTestGateway({ MESSAGING_NETWORK: 'sandbox', RECEIVE_STATUS: 'true' });
      try {
        const account = await newAccount(other.api);
        const poster = await newPhone(other.api, account, { push_name: 'Poster' });
        const instance = await newInstance(other.api, account);
        const mine = await newPhone(other.api, account, { contacts: [poster.phone] });
        await pairByQr(other.api, account, instance.id, mine.phone);
        const post = await other.api('POST', `/sandbox/phones/${poster.phone}/status`, { token: account.jwt, body: { text: 'my day' } });
        const received = await waitForEvent(other.gateway, instance.id, (e) => e.type === 'MessageReceived', 'the status post');
        expect(received.data.message).to.include({ id: post.body.message_id, chat: 'status@broadcast', sender: poster.jid, text: 'my day' });
      } finally {
        await other.stop();
      }
    });
  });

  describe('LID-addressed people', () => {
    it('AddressingMode is always present: pn for a person writing by phone number, and for our own sends to them', async () => {
      const me = await pairedWithHook();
      const plain = await newPhone(gw.api, owner, { push_name: 'Plain' });
      const theirs = await send(plain.phone, { to: me.phone.phone, text: 'by number' });
      expect((await hookFor(me.instance.id, theirs)).event.Info).to.include({ Chat: plain.jid, AddressingMode: 'pn' });
      const ours = await gw.api('POST', `/instances/${me.instance.id}/chat/send/text`, { token: owner.jwt, body: { phone: plain.phone, message: 'back' } });
      expect(ours.status, ours.text).to.equal(200);
      const echo = await hookFor(me.instance.id, ours.body.data.message_id);
      expect(echo.event.Info).to.include({ IsFromMe: true, AddressingMode: 'pn' });
      const stored = (await sessionEvents(gw.gateway, me.instance.id)).filter((e) => e.type === 'MessageReceived' || e.type === 'MessageSent');
      expect(stored.map((e: any) => e.data.message.addressing_mode)).to.deep.equal(['pn', 'pn']);
    });

    it('a person writing by LID is one chat under the phone jid, with the LIDs beside it in the webhook', async () => {
      const me = await pairedWithHook();
      const hidden: any = await newPhone(gw.api, owner, { push_name: 'Hidden', addressing: 'lid' });
      expect(hidden.lid).to.match(/^[1-9]\d{14}@lid$/);
      const first = await send(hidden.phone, { to: me.phone.phone, text: 'hi by lid' });
      const body = await hookFor(me.instance.id, first);
      expect(body.event.Info).to.include({ Chat: hidden.jid, Sender: hidden.jid, AddressingMode: 'lid', ChatLID: hidden.lid, SenderLID: hidden.lid });
      // Our answer, by phone number, lands in the same chat.
      const reply = await gw.api('POST', `/instances/${me.instance.id}/chat/send/text`, { token: owner.jwt, body: { phone: hidden.phone, message: 'hello' } });
      expect(reply.status, reply.text).to.equal(200);
      await send(hidden.phone, { to: me.phone.phone, text: 'again' });
      await waitFor(async () => (await chatList(gw, owner, me.instance.id)).content[0]?.messages_unread === 1, 'the chat list');
      const chats = await chatList(gw, owner, me.instance.id);
      expect(chats.content.map((c: any) => c.jid)).to.deep.equal([hidden.jid]);
      expect(chats.content[0]).to.include({ phone: hidden.phone, name: 'Hidden' });
    });

    it('a person who wrote by LID alone before the pair was known becomes one chat under the phone jid once it is', async () => {
      const me = await pairedWithHook();
      const hidden: any = await newPhone(gw.api, owner, { push_name: 'Hidden', addressing: 'lid' });
      const first = await send(hidden.phone, { to: me.phone.phone, text: 'by lid alone', lid_only: true });
      const body = await hookFor(me.instance.id, first);
      expect(body.event.Info).to.include({ Chat: hidden.lid, Sender: hidden.lid });
      await send(hidden.phone, { to: me.phone.phone, text: 'still by lid', lid_only: true });
      await waitFor(async () => (await chatList(gw, owner, me.instance.id)).content[0]?.messages_unread === 2, 'the LID chat');
      const before = await chatList(gw, owner, me.instance.id);
      expect(before.content.map((c: any) => c.jid)).to.deep.equal([hidden.lid]);
      // The network now sends the phone jid beside the LID: the pair is known, the chats are one.
      const third = await send(hidden.phone, { to: me.phone.phone, text: 'with my number' });
      await waitFor(async () => (await chatList(gw, owner, me.instance.id)).content[0]?.messages_unread === 3, 'the folded chat');
      const after = await chatList(gw, owner, me.instance.id);
      expect(after.content.map((c: any) => c.jid)).to.deep.equal([hidden.jid]);
      expect(after.content[0]).to.include({ phone: hidden.phone, name: 'Hidden', messages_unread: 3 });
      expect(after.total ?? after.content.length).to.equal(1);
      // Our reply by phone number stays in that one chat and reads it.
      const reply = await gw.api('POST', `/instances/${me.instance.id}/chat/send/text`, { token: owner.jwt, body: { phone: hidden.phone, message: 'hello' } });
      expect(reply.status, reply.text).to.equal(200);
      await waitFor(async () => (await chatList(gw, owner, me.instance.id)).content[0]?.messages_unread === 0, 'the chat read by our reply');
      expect((await chatList(gw, owner, me.instance.id)).content.map((c: any) => c.jid)).to.deep.equal([hidden.jid]);
      expect(third).to.be.a('string');
    });

    it('lid_only is refused for a phone-addressed phone and in groups, and stores nothing', async () => {
      const me = await pairedWithHook();
      const plain = await newPhone(gw.api, owner);
      const hidden: any = await newPhone(gw.api, owner, { addressing: 'lid' });
      const refused = await gw.api('POST', `/sandbox/phones/${plain.phone}/messages`, { token: owner.jwt, body: { to: me.phone.phone, text: 'x', lid_only: true } });
      expectError(refused, 400, 'invalid_input');
      const group = await gw.api('POST', '/sandbox/groups', { token: owner.jwt, body: { name: 'G', owner: hidden.phone, participants: [me.phone.phone] } });
      const inGroup = await gw.api('POST', `/sandbox/phones/${hidden.phone}/messages`, { token: owner.jwt, body: { to: group.body.jid, text: 'x', lid_only: true } });
      expectError(inGroup, 400, 'invalid_input');
      const inbox = await gw.api('GET', `/sandbox/phones/${me.phone.phone}/inbox`, { token: owner.jwt });
      expect(inbox.body.messages).to.deep.equal([]);
    });

    it('group/list names a LID-addressed participant by LID with the phone as alternate, when created and when added', async () => {
      const me = await pairedWithHook();
      const hidden: any = await newPhone(gw.api, owner, { push_name: 'Hidden', addressing: 'lid' });
      const later: any = await newPhone(gw.api, owner, { push_name: 'Later', addressing: 'lid' });
      const plain = await newPhone(gw.api, owner);
      const made = await gw.api('POST', '/sandbox/groups', { token: owner.jwt, body: { name: 'Mixed', owner: me.phone.phone, participants: [hidden.phone, plain.phone] } });
      expect(made.status, made.text).to.equal(201);
      const added = await gw.api('POST', `/sandbox/groups/${made.body.jid}/participants`, { token: owner.jwt, body: { add: [later.phone], by: me.phone.phone } });
      expect(added.status, added.text).to.equal(200);
      const participants = async () => {
        const res = await gw.api('GET', `/instances/${me.instance.id}/group/list`, { token: owner.jwt });
        return (res.body?.data?.groups?.find((g: any) => g.jid === made.body.jid)?.participants ?? []) as any[];
      };
      await waitFor(async () => (await participants()).length === 4, 'the group with its added member');
      const byPhone = new Map((await participants()).map((p) => [p.phone_number, p]));
      expect(byPhone.get(hidden.phone)).to.include({ jid: hidden.lid, phone_number: hidden.phone, lid: hidden.lid });
      expect(byPhone.get(later.phone)).to.include({ jid: later.lid, phone_number: later.phone, lid: later.lid });
      expect(byPhone.get(plain.phone)).to.include({ jid: plain.jid, phone_number: plain.phone, lid: '' });
      // The connected account is still recognised as the group's admin.
      expect(byPhone.get(me.phone.phone)).to.include({ is_admin: true, is_super_admin: true });
    });

    it('a phone-addressed person says so', async () => {
      const me = await pairedWithHook();
      const plain = await newPhone(gw.api, owner);
      const id = await send(plain.phone, { to: me.phone.phone, text: 'plain' });
      const body = await hookFor(me.instance.id, id);
      expect(body.event.Info).to.include({ Chat: plain.jid, Sender: plain.jid });
      expect(body.event.Info).to.not.have.property('ChatLID');
    });
  });

  describe('numbers', () => {
    it('a number not on the network: 400 "not on WhatsApp" on send, exists false on the check', async () => {
      const me = await pairedWithHook();
      const nobody = '5599000000000';
      const sent = await gw.api('POST', `/instances/${me.instance.id}/chat/send/text`, { token: owner.jwt, body: { phone: nobody, message: 'x' } });
      expectError(sent, 400, 'invalid_input');
      expect(sent.body.error.message).to.match(/not on WhatsApp/);
      const check = await gw.api('GET', `/instances/${me.instance.id}/contacts/check?phone=${nobody}`, { token: owner.jwt });
      expect(check.status, check.text).to.equal(200);
      expect(check.body).to.deep.include({ success: true, data: { phone: nobody, exists: false, jid: null } });
    });

    it('a Brazilian mobile is reached with or without its ninth digit, and the check names the jid the network uses', async () => {
      const me = await pairedWithHook();
      const without = brazilian(false);
      const old = await newPhone(gw.api, owner, { phone: without });
      const withNinth = `${without.slice(0, 4)}9${without.slice(4)}`;
      const check = await gw.api('GET', `/instances/${me.instance.id}/contacts/check?phone=${withNinth}`, { token: owner.jwt });
      expect(check.body.data).to.deep.equal({ phone: withNinth, exists: true, jid: old.jid });
      const sent = await gw.api('POST', `/instances/${me.instance.id}/chat/send/text`, { token: owner.jwt, body: { phone: withNinth, message: 'oi' } });
      expect(sent.status, sent.text).to.equal(200);
      const inbox = await gw.api('GET', `/sandbox/phones/${old.phone}/inbox`, { token: owner.jwt });
      expect(inbox.body.messages.map((m: any) => m.text)).to.deep.equal(['oi']);

      const modern = await newPhone(gw.api, owner, { phone: brazilian(true) });
      const short = `${modern.phone.slice(0, 4)}${modern.phone.slice(5)}`;
      const back = await gw.api('GET', `/instances/${me.instance.id}/contacts/check?phone=${short}`, { token: owner.jwt });
      expect(back.body.data).to.deep.equal({ phone: short, exists: true, jid: modern.jid });
    });

    it('the check validates its input and needs a connected session', async () => {
      const me = await pairedWithHook();
      expectError(await gw.api('GET', `/instances/${me.instance.id}/contacts/check?phone=12ab`, { token: owner.jwt }), 400, 'invalid_input');
      expectError(await gw.api('GET', `/instances/${me.instance.id}/contacts/check`, { token: owner.jwt }), 400, 'invalid_input');
      const idle = await newInstance(gw.api, owner);
      expectError(await gw.api('GET', `/instances/${idle.id}/contacts/check?phone=5511999990001`, { token: owner.jwt }), 409, 'not_connected');
    });
  });

  describe('edits, deletions and other message types', () => {
    it('an edit and a deletion arrive as Message with the network protocol message; the chat list does not count them', async () => {
      const me = await pairedWithHook();
      const peer = await newPhone(gw.api, owner, { push_name: 'Peer' });
      const original = await send(peer.phone, { to: me.phone.phone, text: 'tpyo' });
      const edit = await gw.api('POST', `/sandbox/phones/${peer.phone}/messages/${original}/edit`, { token: owner.jwt, body: { text: 'typo' } });
      expect(edit.status, edit.text).to.equal(201);
      const edited = await hookFor(me.instance.id, edit.body.message_id);
      expect(edited.event.Info.Type).to.equal('edit');
      expect(edited.event.Message).to.deep.equal({
        protocolMessage: { type: 'MESSAGE_EDIT', key: { ID: original, remoteJID: peer.jid }, editedMessage: { conversation: 'typo' } },
      });
      const del = await gw.api('DELETE', `/sandbox/phones/${peer.phone}/messages/${original}`, { token: owner.jwt });
      expect(del.status, del.text).to.equal(200);
      const revoked = await hookFor(me.instance.id, del.body.message_id);
      expect(revoked.event.Message).to.deep.equal({ protocolMessage: { type: 'REVOKE', key: { ID: original, remoteJID: peer.jid, fromMe: false } } });
      const chats = await chatList(gw, owner, me.instance.id);
      expect(chats.content[0]).to.include({ jid: peer.jid, messages_unread: 1 });
      // Only one's own messages can be changed.
      const theirs = await gw.api('DELETE', `/sandbox/phones/${me.phone.phone}/messages/${original}`, { token: owner.jwt });
      expectError(theirs, 404, 'not_found');
    });

    it('location, contact, poll and sticker arrive as the network delivers them', async () => {
      const me = await pairedWithHook();
      const peer = await newPhone(gw.api, owner);
      const location = await send(peer.phone, { to: me.phone.phone, location: { latitude: -23.55, longitude: -46.63, name: 'Sé' } });
      const vcard = 'BEGIN:VCARD\nVERSION:3.0\nFN:Ana\nTEL;type=CELL;waid=5511999990009:+55 11 99999-0009\nEND:VCARD';
      const contact = await send(peer.phone, { to: me.phone.phone, contact: { display_name: 'Ana', vcard } });
      const poll = await send(peer.phone, { to: me.phone.phone, poll: { name: 'Lunch?', options: ['yes', 'no'], selectable_count: 1 } });
      const png = Buffer.from('RIFF....WEBPVP8 sticker').toString('base64');
      const sticker = await send(peer.phone, { to: me.phone.phone, media: { kind: 'sticker', mimetype: 'image/webp', data_base64: png } });

      expect((await hookFor(me.instance.id, location)).event).to.deep.include({
        Message: { locationMessage: { degreesLatitude: -23.55, degreesLongitude: -46.63, name: 'Sé' } },
      });
      expect((await hookFor(me.instance.id, location)).event.Info.Type).to.equal('location');
      expect((await hookFor(me.instance.id, contact)).event.Message).to.deep.equal({ contactMessage: { displayName: 'Ana', vcard } });
      expect((await hookFor(me.instance.id, poll)).event.Message).to.deep.equal({
        pollCreationMessage: { name: 'Lunch?', options: [{ optionName: 'yes' }, { optionName: 'no' }], selectableOptionsCount: 1 },
      });
      const stickerBody = await hookFor(me.instance.id, sticker);
      expect(stickerBody.event.Info).to.include({ Type: 'media', MediaType: 'sticker' });
      const m = stickerBody.event.Message.stickerMessage;
      // Downloadable like an image: stickers use the image keys.
      const download = await gw.api('POST', `/instances/${me.instance.id}/chat/downloadimage`, {
        token: owner.jwt,
        body: { url: m.URL, media_key: m.mediaKey, mimetype: m.mimetype, file_sha256: m.fileSHA256, file_length: m.fileLength, direct_path: m.directPath, file_enc_sha256: m.fileEncSha256 },
      });
      expect(download.status, download.text).to.equal(200);
      expect(download.body.data.data).to.equal(`data:image/webp;base64,${png}`);
      const chats = await chatList(gw, owner, me.instance.id);
      expect(chats.content[0]).to.include({ jid: peer.jid, messages_unread: 4 });
    });
  });
});

describe('history of a LID-addressed person (sandbox)', function () {
  this.timeout(20_000);
  it('arrives keyed by the phone jid with the LIDs beside, as live messages do', async () => {
    const gw = await startTestGateway({ MESSAGING_NETWORK: 'sandbox' });
    try {
      const owner = await newAccount(gw.api);
      const hidden: any = await newPhone(gw.api, owner, { push_name: 'Hidden', addressing: 'lid' });
      const mine = await newPhone(gw.api, owner);
      const early = await gw.api('POST', `/sandbox/phones/${hidden.phone}/messages`, { token: owner.jwt, body: { to: mine.phone, text: 'before pairing' } });
      const instance = await newInstance(gw.api, owner);
      await pairByQr(gw.api, owner, instance.id, mine.phone);
      const history = await waitForEvent(gw.gateway, instance.id, (e) => e.type === 'HistorySyncReceived', 'history');
      expect(history.data.messages[0]).to.include({ id: early.body.message_id, chat: hidden.jid, chat_lid: hidden.lid, sender_lid: hidden.lid, addressing_mode: 'lid' });
      expect(history.data.chats.map((c: any) => c.jid)).to.deep.equal([hidden.jid]);
    } finally {
      await gw.stop();
    }
  });
});
