/* eslint-disable @typescript-eslint/no-explicit-any -- answers and bodies are read field by field */
import { proto, unpadRandomMax16, type BinaryNode } from '@whiskeysockets/baileys';
import { expect } from 'chai';
import { expectError, newAccount, newInstance, type TestAccount, type TestGateway } from '../../support/gateway.js';
import { sessionEvents, waitFor } from '../../support/sandbox.js';
import { chatsUntil } from '../../support/chats.js';
import { Receiver } from '../../webhooks/support/receiver.js';
import { Peer } from '../../servers/whatsapp/peer.js';
import { ScriptedWhatsApp, type ScriptedConnection } from '../../servers/whatsapp/scripted-whatsapp.js';
import { anyData, pairInstance, startPhoneGateway, waitForSession } from './phone-gateway.js';

const isUsync = (protocol: string) => (n: BinaryNode) =>
  n.tag === 'iq' && n.attrs.xmlns === 'usync' && JSON.stringify(n.content).includes(`"tag":"${protocol}"`);
const messagesTo = (conn: ScriptedConnection, jid: string) => conn.received.filter((n) => n.tag === 'message' && n.attrs.to === jid);

/**
 * What a group member's phone decrypts from the gateway's group messages, in order: the sender
 * key comes with the first (in the member's own copy), then each message's group ciphertext.
 */
async function openedInGroup(peer: Peer, stanzas: BinaryNode[], fromDevice: string, group: string): Promise<proto.IMessage[]> {
  const out: proto.IMessage[] = [];
  for (const stanza of stanzas) {
    const children = stanza.content as BinaryNode[];
    const participants = children.find((n) => n.tag === 'participants');
    const mine = (participants?.content as BinaryNode[] | undefined)?.find((n) => n.attrs.jid?.split(/[:@]/)[0] === peer.phone || n.attrs.jid?.split(/[:@]/)[0] === peer.lidUser);
    const enc = (mine?.content as BinaryNode[] | undefined)?.find((n) => n.tag === 'enc');
    if (enc) {
      const distribution = (await peer.decrypt(fromDevice, enc)).senderKeyDistributionMessage;
      if (distribution) await peer.repo.processSenderKeyDistributionMessage({ item: distribution, authorJid: fromDevice });
    }
    const skmsg = children.find((n) => n.tag === 'enc' && n.attrs.type === 'skmsg');
    if (!skmsg) throw new Error('no group ciphertext');
    const plain = await peer.repo.decryptGroupMessage({ group, authorJid: fromDevice, msg: skmsg.content as Uint8Array });
    out.push(proto.Message.decode(unpadRandomMax16(plain)));
  }
  return out;
}

/** The content a peer's phone decrypts from a message stanza the gateway sent (its `to` node for that peer). */
async function openedBy(peer: Peer, stanza: BinaryNode, fromDevice: string): Promise<proto.IMessage> {
  const participants = (stanza.content as BinaryNode[]).find((n) => n.tag === 'participants');
  const to = (participants?.content as BinaryNode[] | undefined)?.find((n) => n.attrs.jid?.startsWith(`${peer.phone}:0@`) || n.attrs.jid?.startsWith(`${peer.phone}@`) || n.attrs.jid?.startsWith(`${peer.lidUser}:0@`) || n.attrs.jid?.startsWith(`${peer.lidUser}@`));
  const enc = (to?.content as BinaryNode[] | undefined)?.find((n) => n.tag === 'enc');
  if (!enc) throw new Error(`no copy for ${peer.pn} in ${JSON.stringify(stanza.attrs)}`);
  const message = await peer.decrypt(fromDevice, enc);
  return message.deviceSentMessage?.message ?? message;
}

/**
 * Day-one traffic on a real phone: Baileys' socket against a scripted WhatsApp server, through the
 * whole gateway (HTTP in, events stored, HTTP out).
 */
describe('a paired phone, against a scripted WhatsApp server', function () {
  this.timeout(60_000);
  let server: ScriptedWhatsApp;
  let gw: TestGateway;
  let owner: TestAccount;
  let alice: Peer;

  beforeEach(async () => {
    server = await ScriptedWhatsApp.start();
    alice = server.addPeer(new Peer('5511988887777', '200000000000002', 'Alice'));
    gw = await startPhoneGateway(server);
    owner = await newAccount(gw.api);
  });

  afterEach(async () => {
    await gw.stop();
    await server.stop();
    expect(server.errors.map(String)).to.deep.equal([]);
  });

  const gatewayDevice = () => `${server.phone.phone}:7@s.whatsapp.net`;
  const sendText = (instanceId: string, phone: string, message: string) =>
    gw.api('POST', `/instances/${instanceId}/chat/send/text`, { token: owner.jwt, body: { phone, message } });

  it('pairs by QR over HTTP, then receives a message a person sent from their LID, by phone number', async () => {
    const instance = await newInstance(gw.api, owner);
    const conn = await pairInstance(gw, server, owner, instance.id);
    const id = await server.deliver(conn, alice, { conversation: 'hello' });
    // Baileys acknowledges the message where it came from: the LID.
    const ack = await conn.next((n) => n.tag === 'receipt' && n.attrs.id === id, 'the delivery receipt');
    expect(ack.attrs.to).to.equal(alice.lid);
    const received = await waitForSession(gw, instance.id, (e) => e.type === 'MessageReceived', 'MessageReceived');
    expect(anyData(received).message).to.include({ id, chat: alice.pn, chat_lid: alice.lid, sender: alice.pn, addressing_mode: 'lid', text: 'hello' });
    // The chat's own update goes to the same chat (one person, one chat), its live unread increment
    // left to the message itself: keyed by LID it was counted a second time, in a second chat.
    await waitForSession(gw, instance.id, (e) => e.type === 'ChatUpdated', 'the chat update');
    const updates = (await sessionEvents(gw.gateway, instance.id)).filter((e) => e.type === 'ChatUpdated').map(anyData);
    expect(updates.map((u) => u.jid)).to.deep.equal([alice.pn]);
    expect(updates[0].changes).to.not.have.property('unread_delta');
    const chats = await chatsUntil(gw, owner, instance.id, (page) => page.content?.length === 1 && page.content[0].messages_unread === 1);
    expect(chats.content.map((c: any) => c.jid)).to.deep.equal([alice.pn]);
  });

  it('what a phone sends arrives with its content: a video note with its media, a list reply as a button reply, mentions', async () => {
    const rx = await new Receiver().start();
    try {
      const instance = await newInstance(gw.api, owner);
      await gw.api('POST', `/instances/${instance.id}/webhook`, { token: owner.jwt, body: { webhookURL: rx.url, events: 'All' } });
      const conn = await pairInstance(gw, server, owner, instance.id);
      const media = { url: 'https://mmg.whatsapp.net/ptv.enc', mediaKey: Buffer.alloc(32, 1), fileSha256: Buffer.alloc(32, 2), fileEncSha256: Buffer.alloc(32, 3), directPath: '/v/ptv', mimetype: 'video/mp4', fileLength: 2048, seconds: 5 };
      const note = await server.deliver(conn, alice, { ptvMessage: media });
      const reply = await server.deliver(conn, alice, { listResponseMessage: { title: 'Large', singleSelectReply: { selectedRowId: 'size-l' }, contextInfo: { stanzaId: 'LIST1' } } });
      const mention = await server.deliver(conn, alice, { extendedTextMessage: { text: '@owner', contextInfo: { mentionedJid: [server.phone.pn] } } });
      const hook = async (id: string) => {
        let found: any;
        await waitFor(() => (found = rx.received.find((r) => r.body.type === 'Message' && r.body.event.Info.ID === id)) !== undefined, `the webhook of ${id}`);
        return found.body.event;
      };
      const video = await hook(note);
      expect(video.Info).to.include({ Type: 'media', MediaType: 'video' });
      expect(video.Message.ptvMessage).to.include({ URL: media.url, mediaKey: media.mediaKey.toString('base64'), seconds: 5 });
      expect((await hook(reply)).Message).to.deep.equal({ buttonsMessage: { contentText: 'Large', buttons: [{ buttonID: 'size-l', buttonText: { displayText: 'Large' } }] } });
      expect((await hook(mention)).Message.extendedTextMessage.contextInfo).to.deep.equal({ mentionedJID: [server.phone.pn] });
    } finally {
      await rx.stop();
    }
  });

  describe('reads go where the message came from', () => {
    it('chat/markread of a message sent from a LID sends the read receipt to the LID, as Baileys acknowledged it', async () => {
      const instance = await newInstance(gw.api, owner);
      const conn = await pairInstance(gw, server, owner, instance.id);
      const id = await server.deliver(conn, alice, { conversation: 'read me' });
      await waitForSession(gw, instance.id, (e) => e.type === 'MessageReceived', 'MessageReceived');
      const read = await gw.api('POST', `/instances/${instance.id}/chat/markread`, { token: owner.jwt, body: { phone: alice.phone, message_ids: [id] } });
      expect(read.status, read.text).to.equal(200);
      const receipt = await conn.next((n) => n.tag === 'receipt' && n.attrs.id === id && n.attrs.type === 'read', 'the read receipt');
      expect(receipt.attrs.to).to.equal(alice.lid);
    });

    it('auto-read sends its read receipt to the LID too', async () => {
      const instance = await newInstance(gw.api, owner, { auto_read_messages: true });
      const conn = await pairInstance(gw, server, owner, instance.id);
      const id = await server.deliver(conn, alice, { conversation: 'read me by yourself' });
      const receipt = await conn.next((n) => n.tag === 'receipt' && n.attrs.id === id && n.attrs.type === 'read', 'the auto-read receipt');
      expect(receipt.attrs.to).to.equal(alice.lid);
    });
  });

  describe('phone number and LID pairs', () => {
    it('are remembered across a reconnect: a receipt and a presence from the LID are keyed by phone number', async () => {
      const instance = await newInstance(gw.api, owner);
      const conn = await pairInstance(gw, server, owner, instance.id);
      await server.deliver(conn, alice, { conversation: 'hi, from my LID' });
      await waitForSession(gw, instance.id, (e) => e.type === 'MessageReceived', 'MessageReceived');
      const sent = await sendText(instance.id, alice.phone, 'hello Alice');
      expect(sent.status, sent.text).to.equal(200);
      const messageId = sent.body.data.message_id as string;

      // The connection drops; the gateway logs in again on a new socket.
      const before = server.connections.length;
      conn.drop();
      const again = await server.connection(before);
      await waitFor(async () => (await sessionEvents(gw.gateway, instance.id)).filter((e) => e.type === 'SessionConnected').length === 2, 'connected again');
      await again.next((n) => n.tag === 'iq' && n.attrs.xmlns === 'passive', 'the login settled');

      await server.receipt(again, alice.lid, [messageId], 'read');
      await server.presence(again, alice.lid, true);
      const receipt = await waitForSession(gw, instance.id, (e) => e.type === 'ReceiptReceived' && anyData(e).state === 'Read', 'the read receipt');
      expect(anyData(receipt)).to.include({ chat: alice.pn, sender: alice.pn });
      expect(anyData(receipt).message_ids).to.deep.equal([messageId]);
      const presence = await waitForSession(gw, instance.id, (e) => e.type === 'PresenceUpdated', 'the presence');
      expect(anyData(presence).jid).to.equal(alice.pn);
    });
  });

  describe('number checks', () => {
    it('a check the network never answers is a 502 upstream failure, not remembered: the next send asks again and goes out', async () => {
      await gw.stop();
      gw = await startPhoneGateway(server, {}, { socket: { defaultQueryTimeoutMs: 1500 } });
      owner = await newAccount(gw.api);
      const instance = await newInstance(gw.api, owner);
      const conn = await pairInstance(gw, server, owner, instance.id);
      let silenced = 0;
      server.answer((iq) => (isUsync('contact')(iq) && silenced++ === 0 ? 'silent' : undefined));

      expectError(await sendText(instance.id, alice.phone, 'are you there?'), 502, 'upstream_failed');
      const sent = await sendText(instance.id, alice.phone, 'are you there?');
      expect(sent.status, sent.text).to.equal(200);
      expect(conn.received.filter(isUsync('contact'))).to.have.length(2);
      await conn.next((n) => n.tag === 'message' && n.attrs.id === sent.body.data.message_id, 'the message');
    });

    it('a number that is not on WhatsApp answers 400 and is remembered for a while: no second check', async () => {
      const instance = await newInstance(gw.api, owner);
      const conn = await pairInstance(gw, server, owner, instance.id);
      const nobody = '5511955554444';
      expectError(await sendText(instance.id, nobody, 'hello?'), 400, 'invalid_input');
      expectError(await sendText(instance.id, nobody, 'hello?'), 400, 'invalid_input');
      expect(conn.received.filter(isUsync('contact'))).to.have.length(1);
    });
  });

  describe('sends the network refuses after taking them', () => {
    it('a 463 arrives as ReadReceipt state Failed with Error {code, reason}', async () => {
      const rx = await new Receiver().start();
      try {
        const instance = await newInstance(gw.api, owner);
        const hook = await gw.api('POST', `/instances/${instance.id}/webhook`, { token: owner.jwt, body: { webhookURL: rx.url, events: 'All' } });
        expect(hook.status, hook.text).to.equal(200);
        await pairInstance(gw, server, owner, instance.id);
        server.ackOf = () => ({ error: '463' });
        const sent = await sendText(instance.id, alice.phone, 'first words to a stranger');
        expect(sent.status, sent.text).to.equal(200);
        const messageId = sent.body.data.message_id as string;
        let failed: any;
        await waitFor(() => (failed = rx.received.find((r) => r.body.type === 'ReadReceipt' && r.body.state === 'Failed')) !== undefined, 'the Failed receipt');
        expect(failed.body.event).to.include({ Chat: alice.pn });
        expect(failed.body.event.MessageIDs).to.deep.equal([messageId]);
        expect(failed.body.event.Error.code).to.equal(463);
        expect(failed.body.event.Error.reason).to.match(/restrict/);
        const stored = await waitForSession(gw, instance.id, (e) => e.type === 'ReceiptReceived' && anyData(e).state === 'Failed', 'the stored receipt');
        expect(anyData(stored).error.code).to.equal(463);
      } finally {
        await rx.stop();
      }
    });
  });

  describe('disappearing chats and groups', () => {
    it("a message sent into a disappearing chat carries the chat's timer, also after a reconnect", async () => {
      const instance = await newInstance(gw.api, owner);
      const conn = await pairInstance(gw, server, owner, instance.id);
      // Alice turns disappearing messages on (one day).
      await server.deliver(conn, alice, { protocolMessage: { type: proto.Message.ProtocolMessage.Type.EPHEMERAL_SETTING, ephemeralExpiration: 86_400 } });
      await server.deliver(conn, alice, { conversation: 'this will vanish' });
      await waitForSession(gw, instance.id, (e) => e.type === 'MessageReceived', 'MessageReceived');
      const before = server.connections.length;
      conn.drop();
      const again = await server.connection(before);
      await waitFor(async () => (await sessionEvents(gw.gateway, instance.id)).filter((e) => e.type === 'SessionConnected').length === 2, 'connected again');

      const sent = await sendText(instance.id, alice.phone, 'so will this');
      expect(sent.status, sent.text).to.equal(200);
      const stanza = await again.next((n) => n.tag === 'message' && n.attrs.id === sent.body.data.message_id, 'the message');
      const content = await openedBy(alice, stanza, gatewayDevice());
      expect(content.extendedTextMessage?.contextInfo?.expiration).to.equal(86_400);
    });

    it('a group send carries the group timer, and busy senders fetch the group metadata once', async () => {
      const group = '120363000000000001@g.us';
      server.groups.set(group, { subject: 'Team', members: [server.phone, alice], ephemeral: 604_800, unlisted: true });
      const instance = await newInstance(gw.api, owner);
      const conn = await pairInstance(gw, server, owner, instance.id);
      // The group is not among those the connection listed at open (joined meanwhile, or its cache expired).
      await waitFor(() => conn.received.some((n) => n.tag === 'iq' && n.attrs.xmlns === 'w:g2'), 'the groups list at open');
      const metadataQueries = () => conn.received.filter((n) => n.tag === 'iq' && n.attrs.xmlns === 'w:g2' && n.attrs.to === group);
      const first = await sendText(instance.id, group, 'one');
      expect(first.status, first.text).to.equal(200);
      const second = await sendText(instance.id, group, 'two');
      expect(second.status, second.text).to.equal(200);
      await conn.next((n) => n.tag === 'message' && n.attrs.id === second.body.data.message_id, 'the second message');
      expect(metadataQueries(), 'one metadata fetch for two sends').to.have.length(1);
      const stanzas = messagesTo(conn, group);
      expect(stanzas.map((m) => m.attrs.expiration)).to.deep.equal(['604800', '604800']);
      // What Alice's phone reads: the timer inside each message, which makes it disappear there.
      const contents = await openedInGroup(alice, stanzas, gatewayDevice(), group);
      expect(contents.map((c) => c.extendedTextMessage?.contextInfo?.expiration)).to.deep.equal([604_800, 604_800]);
    });
  });
});
