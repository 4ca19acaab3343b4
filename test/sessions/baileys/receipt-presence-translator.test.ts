import { proto, type BaileysEventMap, type MessageUserReceiptUpdate, type PresenceData, type WAMessageUpdate } from '@whiskeysockets/baileys';
import { expect } from 'chai';
import { ChatStateTracker } from '../../../src/sessions/baileys/presence-translator.js';
import { ALICE_LID, ALICE_PN, BOB_LID, context, GROUP, ME, ME_PN, T0, translate } from './support.js';

const Status = proto.WebMessageInfo.Status;

/** A status change as Baileys' receipt handler emits it for 1:1 chats (lib/Socket/messages-recv.js). */
const statusUpdate = (id: string, fromMe: boolean, status: proto.WebMessageInfo.Status, t = T0): WAMessageUpdate => ({
  key: { remoteJid: ALICE_PN, id, fromMe },
  update: { status, messageTimestamp: t },
});

describe('Baileys translator: receipts', () => {
  it('maps DELIVERY_ACK (3) on our message to Delivered, by the peer', () => {
    const events = translate({ 'messages.update': [statusUpdate('M1', true, Status.DELIVERY_ACK)] });
    expect(events).to.deep.equal([{ type: 'ReceiptReceived', data: { message_ids: ['M1'], chat: ALICE_PN, sender: ALICE_PN, state: 'Delivered', timestamp_s: T0 } }]);
  });

  it('maps READ (4) to Read and PLAYED (5, a voice note played) to Played, joining one receipt split per message', () => {
    const events = translate({
      'messages.update': [statusUpdate('M1', true, Status.READ), statusUpdate('M2', true, Status.READ), statusUpdate('M3', true, Status.PLAYED, T0 + 5)],
    });
    expect(events).to.deep.equal([
      { type: 'ReceiptReceived', data: { message_ids: ['M1', 'M2'], chat: ALICE_PN, sender: ALICE_PN, state: 'Read', timestamp_s: T0 } },
      { type: 'ReceiptReceived', data: { message_ids: ['M3'], chat: ALICE_PN, sender: ALICE_PN, state: 'Played', timestamp_s: T0 + 5 } },
    ]);
  });

  it("maps the server's error ack (ERROR with the code in messageStubParameters) to Failed with the code and its reason", () => {
    const refused = (id: string, parameters: string[]): WAMessageUpdate => ({ key: { remoteJid: ALICE_PN, id, fromMe: true }, update: { status: Status.ERROR, messageStubParameters: parameters } });
    const events = translate({ 'messages.update': [refused('F1', ['463']), refused('F2', ['999'])] }, context({ nowS: T0 + 60 }));
    expect(events).to.have.length(2);
    expect(events[0]).to.deep.include({ type: 'ReceiptReceived' });
    expect(events.map((e) => e.data)).to.deep.equal([
      { message_ids: ['F1'], chat: ALICE_PN, sender: ALICE_PN, state: 'Failed', timestamp_s: T0 + 60, error: { code: 463, reason: (events[0]!.data as { error: { reason: string } }).error.reason } },
      { message_ids: ['F2'], chat: ALICE_PN, sender: ALICE_PN, state: 'Failed', timestamp_s: T0 + 60, error: { code: 999, reason: 'WhatsApp refused the message (error 999)' } },
    ]);
    expect((events[0]!.data as { error: { reason: string } }).error.reason).to.match(/restricted/);
  });

  it('reads a READ on a message we received as our own phone reading it (read-self)', () => {
    const events = translate({ 'messages.update': [statusUpdate('IN1', false, Status.READ)] });
    expect(events).to.deep.equal([{ type: 'ReceiptReceived', data: { message_ids: ['IN1'], chat: ALICE_PN, sender: ME_PN, state: 'ReadSelf', timestamp_s: T0 } }]);
  });

  it('ignores what is not a receipt: SERVER_ACK, PENDING, updates without a status', () => {
    const events = translate({
      'messages.update': [
        statusUpdate('S1', true, Status.SERVER_ACK),
        statusUpdate('S2', true, Status.PENDING),
        { key: { remoteJid: ALICE_PN, id: 'E1', fromMe: true }, update: { message: { conversation: 'edited' } } },
      ],
    });
    expect(events).to.deep.equal([]);
  });

  it('maps group receipts per participant: delivered, read, and our own read as ReadSelf', () => {
    const receipts: MessageUserReceiptUpdate[] = [
      { key: { remoteJid: GROUP, id: 'G1', fromMe: true, participant: ALICE_LID }, receipt: { userJid: ALICE_LID, receiptTimestamp: T0 } },
      { key: { remoteJid: GROUP, id: 'G2', fromMe: true, participant: ALICE_LID }, receipt: { userJid: ALICE_LID, receiptTimestamp: T0 } },
      { key: { remoteJid: GROUP, id: 'G1', fromMe: true, participant: BOB_LID }, receipt: { userJid: BOB_LID, readTimestamp: T0 + 9 } },
      { key: { remoteJid: GROUP, id: 'G3', fromMe: true, participant: ME }, receipt: { userJid: ME, readTimestamp: T0 + 10 } },
      { key: { remoteJid: GROUP, id: 'G4', fromMe: true }, receipt: { userJid: BOB_LID } },
    ];
    const events = translate({ 'message-receipt.update': receipts });
    expect(events).to.deep.equal([
      { type: 'ReceiptReceived', data: { message_ids: ['G1', 'G2'], chat: GROUP, sender: ALICE_LID, state: 'Delivered', timestamp_s: T0 } },
      { type: 'ReceiptReceived', data: { message_ids: ['G1'], chat: GROUP, sender: BOB_LID, state: 'Read', timestamp_s: T0 + 9 } },
      { type: 'ReceiptReceived', data: { message_ids: ['G3'], chat: GROUP, sender: ME_PN, state: 'ReadSelf', timestamp_s: T0 + 10 } },
    ]);
  });
});

describe('Baileys translator: presence', () => {
  const presence = (id: string, who: string, data: PresenceData): Partial<BaileysEventMap> => ({ 'presence.update': { id, presences: { [who]: data } } });

  it('maps online presence with last seen to PresenceUpdated', () => {
    expect(translate(presence(ALICE_PN, ALICE_PN, { lastKnownPresence: 'available' }))).to.deep.equal([
      { type: 'PresenceUpdated', data: { jid: ALICE_PN, state: 'available' } },
    ]);
    expect(translate(presence(ALICE_PN, ALICE_PN, { lastKnownPresence: 'unavailable', lastSeen: T0 }))).to.deep.equal([
      { type: 'PresenceUpdated', data: { jid: ALICE_PN, state: 'unavailable', last_seen_s: T0 } },
    ]);
  });

  it('maps typing and recording to ChatPresenceUpdated, in 1:1 chats and groups', () => {
    expect(translate(presence(ALICE_PN, ALICE_PN, { lastKnownPresence: 'composing' }))).to.deep.equal([
      { type: 'ChatPresenceUpdated', data: { chat: ALICE_PN, sender: ALICE_PN, state: 'composing' } },
    ]);
    expect(translate(presence(GROUP, ALICE_LID, { lastKnownPresence: 'recording' }))).to.deep.equal([
      { type: 'ChatPresenceUpdated', data: { chat: GROUP, sender: ALICE_LID, state: 'recording' } },
    ]);
  });

  it('reads "available" in a group as a pause (presence is never per group)', () => {
    expect(translate(presence(GROUP, ALICE_LID, { lastKnownPresence: 'available' }))).to.deep.equal([
      { type: 'ChatPresenceUpdated', data: { chat: GROUP, sender: ALICE_LID, state: 'paused' } },
    ]);
  });

  it('reads "available" right after typing in a 1:1 chat as a pause as well as presence', () => {
    const tracker = new ChatStateTracker();
    const typing = translate(presence(ALICE_PN, ALICE_PN, { lastKnownPresence: 'composing' }), context({ wasTyping: tracker.wasTyping }));
    tracker.observe(typing);
    const stop = translate(presence(ALICE_PN, ALICE_PN, { lastKnownPresence: 'available' }), context({ wasTyping: tracker.wasTyping }));
    expect(stop).to.deep.equal([
      { type: 'ChatPresenceUpdated', data: { chat: ALICE_PN, sender: ALICE_PN, state: 'paused' } },
      { type: 'PresenceUpdated', data: { jid: ALICE_PN, state: 'available' } },
    ]);
    tracker.observe(stop);
    expect(tracker.wasTyping(ALICE_PN, ALICE_PN)).to.equal(false);
  });
});
