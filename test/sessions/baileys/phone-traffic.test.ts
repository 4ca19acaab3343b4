/* eslint-disable @typescript-eslint/no-explicit-any -- answers and bodies are read field by field */
import { expect } from 'chai';
import { newAccount, newInstance, type TestAccount, type TestGateway } from '../../support/gateway.js';
import { Peer } from '../../servers/whatsapp/peer.js';
import { ScriptedWhatsApp } from '../../servers/whatsapp/scripted-whatsapp.js';
import { anyData, pairInstance, startPhoneGateway, waitForSession } from './phone-gateway.js';

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

  it('pairs by QR over HTTP, then receives a message a person sent from their LID, by phone number', async () => {
    const instance = await newInstance(gw.api, owner);
    const conn = await pairInstance(gw, server, owner, instance.id);
    const id = await server.deliver(conn, alice, { conversation: 'hello' });
    // Baileys acknowledges the message where it came from: the LID.
    const ack = await conn.next((n) => n.tag === 'receipt' && n.attrs.id === id, 'the delivery receipt');
    expect(ack.attrs.to).to.equal(alice.lid);
    const received = await waitForSession(gw, instance.id, (e) => e.type === 'MessageReceived', 'MessageReceived');
    expect(anyData(received).message).to.include({ id, chat: alice.pn, chat_lid: alice.lid, sender: alice.pn, addressing_mode: 'lid', text: 'hello' });
  });
});
