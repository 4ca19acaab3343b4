import { proto, type BaileysEventMap, type WAMessage } from '@whiskeysockets/baileys';
import { expect } from 'chai';
import type { NetworkMessage, SessionEvent } from '../../../src/domain/session/events.js';
import { withoutBroadcasts } from '../../../src/domain/session/broadcasts.js';
import { messageEvent } from '../../../src/webhooks/bodies/message.js';
import { ALICE_LID, ALICE_PN, b64, BOB_LID, BOB_PN, bytes, context, GROUP, ME_PN, T0, translate, wire } from './support.js';

/**
 * Messages in the shapes a real phone sends them through Baileys 7.0.0-rc14 (after its decode and
 * cleanMessage): what the first day of real traffic brings, and what today's driver lost.
 */
const upsert = (...messages: WAMessage[]): Partial<BaileysEventMap> => ({ 'messages.upsert': { type: 'notify', messages: messages.map(wire) } });
const only = (events: SessionEvent[]): NetworkMessage => {
  const received = events.filter((e) => e.type === 'MessageReceived');
  expect(received).to.have.length(1);
  const event = received[0]!;
  if (event.type !== 'MessageReceived') throw new Error('unreachable');
  return event.data.message;
};
const fromAlice = (id: string, message: proto.IMessage): WAMessage => ({ key: { remoteJid: ALICE_PN, fromMe: false, id }, message, messageTimestamp: T0, pushName: 'Alice' });
const Type = proto.Message.ProtocolMessage.Type;

describe('Baileys translator: what a real phone sends (rc14 shapes)', () => {
  describe('edits and deletions for everyone', () => {
    it('an edit arrives wrapped in editedMessage, as a protocol message naming the edited message', () => {
      const m = only(
        translate(
          upsert(
            fromAlice('E1', {
              editedMessage: {
                message: {
                  protocolMessage: {
                    key: { remoteJid: ALICE_PN, fromMe: false, id: 'ORIG' },
                    type: Type.MESSAGE_EDIT,
                    editedMessage: { extendedTextMessage: { text: 'fixed typo' } },
                    timestampMs: T0 * 1000,
                  },
                },
              },
            }),
          ),
        ),
      );
      expect(m).to.include({ id: 'E1', type: 'edit', text: 'fixed typo', chat: ALICE_PN });
      expect(m.edit).to.deep.equal({ message_id: 'ORIG' });
      expect(messageEvent(m).Message).to.deep.equal({
        protocolMessage: { type: 'MESSAGE_EDIT', key: { ID: 'ORIG', remoteJID: ALICE_PN }, editedMessage: { conversation: 'fixed typo' } },
      });
    });

    it('a deletion is a REVOKE with the deleted message key (the author in groups)', () => {
      const m = only(
        translate(
          upsert({
            key: { remoteJid: GROUP, participant: ALICE_LID, participantAlt: ALICE_PN, fromMe: false, id: 'D1' },
            message: { protocolMessage: { key: { remoteJid: GROUP, fromMe: false, id: 'GONE', participant: ALICE_LID }, type: Type.REVOKE } },
            messageTimestamp: T0,
          }),
        ),
      );
      expect(m).to.include({ type: 'revoke', sender: ALICE_PN, sender_lid: ALICE_LID });
      expect(m.revoke).to.deep.equal({ message_id: 'GONE', from_me: false, participant: ALICE_PN });
      expect(messageEvent(m).Message).to.deep.equal({
        protocolMessage: { type: 'REVOKE', key: { ID: 'GONE', remoteJID: GROUP, fromMe: false, participant: ALICE_PN } },
      });
    });
  });

  describe('stickers, locations, contacts, polls', () => {
    it('a sticker is downloadable media of kind sticker', () => {
      const m = only(
        translate(
          upsert(
            fromAlice('S1', {
              stickerMessage: {
                url: 'https://mmg.whatsapp.net/v/t62.15575-24/x.enc',
                directPath: '/v/t62.15575-24/x.enc?ccb=11-4',
                mediaKey: bytes(1, 2),
                fileSha256: bytes(3),
                fileEncSha256: bytes(4),
                mimetype: 'image/webp',
                fileLength: 2048,
                width: 512,
                height: 512,
                isAnimated: false,
              },
            }),
          ),
        ),
      );
      expect(m.type).to.equal('media');
      expect(m.media).to.deep.equal({
        kind: 'sticker',
        url: 'https://mmg.whatsapp.net/v/t62.15575-24/x.enc',
        direct_path: '/v/t62.15575-24/x.enc?ccb=11-4',
        media_key: b64(bytes(1, 2)),
        file_enc_sha256: b64(bytes(4)),
        file_sha256: b64(bytes(3)),
        file_length: 2048,
        mimetype: 'image/webp',
        width: 512,
        height: 512,
      });
      expect(messageEvent(m).Info.MediaType).to.equal('sticker');
    });

    it('a location, a contact card, several cards and a poll keep their content', () => {
      const events = translate(
        upsert(
          fromAlice('L1', { locationMessage: { degreesLatitude: -23.55, degreesLongitude: -46.63, name: 'Sé', address: 'Praça da Sé' } }),
          fromAlice('C1', { contactMessage: { displayName: 'Ana', vcard: 'BEGIN:VCARD\nFN:Ana\nEND:VCARD' } }),
          fromAlice('C2', { contactsArrayMessage: { displayName: '2 contacts', contacts: [{ displayName: 'A', vcard: 'a' }, { displayName: 'B', vcard: 'b' }] } }),
          fromAlice('P1', { pollCreationMessageV3: { name: 'Lunch?', options: [{ optionName: 'yes' }, { optionName: 'no' }], selectableOptionsCount: 1 } }),
        ),
      );
      const byId = new Map(events.flatMap((e) => (e.type === 'MessageReceived' ? [[e.data.message.id, e.data.message] as const] : [])));
      expect(byId.get('L1')).to.deep.include({ type: 'location', location: { latitude: -23.55, longitude: -46.63, name: 'Sé', address: 'Praça da Sé' } });
      expect(byId.get('C1')).to.deep.include({ type: 'contact', contacts: [{ display_name: 'Ana', vcard: 'BEGIN:VCARD\nFN:Ana\nEND:VCARD' }] });
      expect(messageEvent(byId.get('C2')!).Message).to.deep.equal({ contactsArrayMessage: { contacts: [{ displayName: 'A', vcard: 'a' }, { displayName: 'B', vcard: 'b' }] } });
      expect(byId.get('P1')).to.deep.include({ type: 'poll', poll: { name: 'Lunch?', options: ['yes', 'no'], selectable_count: 1 } });
    });
  });

  describe('authors in groups', () => {
    it('a reaction names the author of the reacted message; a reply quotes its author and content', () => {
      const events = translate(
        upsert(
          {
            key: { remoteJid: GROUP, participant: BOB_LID, participantAlt: BOB_PN, fromMe: false, id: 'R1' },
            message: { reactionMessage: { key: { remoteJid: GROUP, fromMe: false, id: 'M1', participant: ALICE_LID }, text: '❤️' } },
            messageTimestamp: T0,
          },
          {
            key: { remoteJid: GROUP, participant: BOB_LID, participantAlt: BOB_PN, fromMe: false, id: 'Q1' },
            message: {
              extendedTextMessage: {
                text: 'agreed',
                contextInfo: { stanzaId: 'M1', participant: ALICE_LID, quotedMessage: { conversation: 'pizza on friday?' } },
              },
            },
            messageTimestamp: T0,
          },
        ),
        // Alice's pair is known from before.
        context({ pnOf: (lid) => (lid === ALICE_LID ? ALICE_PN : undefined) }),
      );
      const [reaction, reply] = events.filter((e) => e.type === 'MessageReceived').map((e) => (e.type === 'MessageReceived' ? e.data.message : undefined));
      expect(reaction).to.deep.include({ sender: BOB_PN, reaction: { message_id: 'M1', text: '❤️', from_me: false, participant: ALICE_PN } });
      expect(messageEvent(reaction!).Message).to.deep.equal({ reactionMessage: { key: { ID: 'M1', remoteJID: GROUP, fromMe: false, participant: ALICE_PN }, text: '❤️' } });
      expect(reply).to.deep.include({ reply_to: 'M1', quoted: { sender: ALICE_PN, text: 'pizza on friday?' } });
      expect(messageEvent(reply!).Message).to.deep.equal({
        extendedTextMessage: { text: 'agreed', contextInfo: { stanzaID: 'M1', participant: ALICE_PN, quotedMessage: { conversation: 'pizza on friday?' } } },
      });
    });

    it('a group read receipt names the reader by phone jid when the pair is known', () => {
      const events = translate(
        { 'message-receipt.update': [{ key: { remoteJid: GROUP, fromMe: true, id: 'OURS' }, receipt: { userJid: ALICE_LID, readTimestamp: T0 } }] },
        context({ pnOf: (lid) => (lid === ALICE_LID ? ALICE_PN : undefined) }),
      );
      expect(events).to.deep.equal([{ type: 'ReceiptReceived', data: { message_ids: ['OURS'], chat: GROUP, sender: ALICE_PN, state: 'Read', timestamp_s: T0 } }]);
    });
  });

  describe('addresses', () => {
    it('a LID-only happening is keyed by the phone jid once the pair is known, and renders AddressingMode and the LIDs', () => {
      const ctx = context({ pnOf: (lid) => (lid === ALICE_LID ? ALICE_PN : undefined) });
      const m = only(translate(upsert({ key: { remoteJid: ALICE_LID, fromMe: false, id: 'X1', addressingMode: 'lid' }, message: { conversation: 'hi' }, messageTimestamp: T0 }), ctx));
      expect(m).to.include({ chat: ALICE_PN, chat_lid: ALICE_LID, sender: ALICE_PN, sender_lid: ALICE_LID, addressing_mode: 'lid' });
      expect(messageEvent(m).Info).to.include({ Chat: ALICE_PN, Sender: ALICE_PN, AddressingMode: 'lid', ChatLID: ALICE_LID, SenderLID: ALICE_LID });
      // A chat update of the LID lands on the same chat.
      expect(translate({ 'chats.update': [{ id: ALICE_LID, archived: true }] }, ctx)).to.deep.equal([{ type: 'ChatUpdated', data: { jid: ALICE_PN, changes: { archived: true } } }]);
      // Unknown pair: the LID, as the contract says.
      const unknown = only(translate(upsert({ key: { remoteJid: BOB_LID, fromMe: false, id: 'X2' }, message: { conversation: 'hi' }, messageTimestamp: T0 })));
      expect(unknown).to.include({ chat: BOB_LID, sender: BOB_LID, addressing_mode: 'lid' });
    });

    it('AddressingMode is always present: pn for a message by phone number, ours or theirs; read from the jids for events stored without it', () => {
      const theirs = only(translate(upsert({ key: { remoteJid: ALICE_PN, fromMe: false, id: 'P1' }, message: { conversation: 'hi' }, messageTimestamp: T0 })));
      const [sent] = translate(upsert({ key: { remoteJid: ALICE_PN, fromMe: true, id: 'P2' }, message: { conversation: 'hi' }, messageTimestamp: T0 }));
      const ours = sent?.type === 'MessageSent' ? sent.data.message : undefined;
      expect([theirs.addressing_mode, ours?.addressing_mode]).to.deep.equal(['pn', 'pn']);
      expect(messageEvent(theirs).Info).to.include({ AddressingMode: 'pn' });
      const { addressing_mode: _pn, ...storedBefore } = theirs;
      expect(messageEvent(storedBefore).Info.AddressingMode).to.equal('pn');
      expect(messageEvent({ ...storedBefore, chat: BOB_LID, sender: BOB_LID }).Info.AddressingMode).to.equal('lid');
      // The field keeps its place: after Type (and MediaType), before the LIDs.
      expect(Object.keys(messageEvent(theirs).Info)).to.deep.equal(['ID', 'Chat', 'Sender', 'IsFromMe', 'IsGroup', 'PushName', 'Timestamp', 'Type', 'AddressingMode']);
    });
  });

  describe('status posts and newsletters', () => {
    it('are translated as the network sends them, and dropped before the log unless RECEIVE_STATUS', () => {
      const events = translate(
        upsert(
          { key: { remoteJid: 'status@broadcast', participant: ALICE_PN, fromMe: false, id: 'ST1' }, message: { conversation: 'my day' }, messageTimestamp: T0 },
          { key: { remoteJid: '120363000000000777@newsletter', fromMe: false, id: 'NL1' }, message: { conversation: 'news' }, messageTimestamp: T0 },
          fromAlice('REAL', { conversation: 'real message' }),
        ),
      );
      expect(events.filter((e) => e.type === 'MessageReceived')).to.have.length(3);
      const kept = withoutBroadcasts([
        ...events,
        { type: 'ReceiptReceived', data: { message_ids: ['ST0'], chat: 'status@broadcast', sender: ALICE_PN, state: 'Read', timestamp_s: T0 } },
        { type: 'ChatsUpserted', data: { chats: [{ jid: 'status@broadcast' }, { jid: ALICE_PN }] } },
        { type: 'HistorySyncReceived', data: { sync_type: 'RECENT', chats: [{ jid: 'status@broadcast' }], messages: [] } },
      ]);
      expect(kept.map((e) => (e.type === 'MessageReceived' ? e.data.message.id : e.type))).to.deep.equal(['REAL', 'ChatsUpserted', 'HistorySyncReceived']);
      expect(kept[1]).to.deep.equal({ type: 'ChatsUpserted', data: { chats: [{ jid: ALICE_PN }] } });
      expect(kept[2]).to.deep.include({ data: { sync_type: 'RECENT', chats: [], messages: [] } });
      expect(ME_PN).to.be.a('string');
    });
  });
});

describe('Baileys translator: presence of LID-addressed people', () => {
  it('names the person by phone jid when the pair is known', () => {
    const ctx = context({ pnOf: (lid) => (lid === ALICE_LID ? ALICE_PN : undefined) });
    const events = translate({ 'presence.update': { id: ALICE_LID, presences: { [ALICE_LID]: { lastKnownPresence: 'composing' } } } }, ctx);
    expect(events).to.deep.equal([{ type: 'ChatPresenceUpdated', data: { chat: ALICE_PN, sender: ALICE_PN, state: 'composing' } }]);
  });
});
