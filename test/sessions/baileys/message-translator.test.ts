import { proto, type BaileysEventMap, type WAMessage } from '@whiskeysockets/baileys';
import { expect } from 'chai';
import type { NetworkMessage, SessionEvent } from '../../../src/domain/session/events.js';
import { messageEvent } from '../../../src/webhooks/bodies/message.js';
import { ALICE_LID, ALICE_PN, b64, BOB_PN, bytes, context, GROUP, ME_LID_USER, ME_PN, T0, translate, wire } from './support.js';

const upsert = (type: BaileysEventMap['messages.upsert']['type'], ...messages: WAMessage[]): Partial<BaileysEventMap> => ({
  'messages.upsert': { type, messages: messages.map(wire) },
});

/** The fields every message from Alice in a 1:1 chat addressed by phone number carries. */
const fromAlice = { chat: ALICE_PN, addressing_mode: 'pn', sender: ALICE_PN, sender_pn: ALICE_PN, from_me: false, is_group: false, push_name: 'Alice', timestamp_s: T0 };

describe('Baileys translator: messages', () => {
  it('turns a live text from someone else into MessageReceived notify', () => {
    const events = translate(
      upsert('notify', { key: { remoteJid: ALICE_PN, fromMe: false, id: 'A1' }, message: { conversation: 'hello' }, messageTimestamp: T0, pushName: 'Alice' }),
    );
    expect(events).to.deep.equal([
      { type: 'MessageReceived', data: { upsert: 'notify', message: { id: 'A1', ...fromAlice, type: 'text', text: 'hello' } } },
    ]);
  });

  it('keeps the reply target of an extended text', () => {
    const events = translate(
      upsert('notify', {
        key: { remoteJid: ALICE_PN, fromMe: false, id: 'A2' },
        message: {
          extendedTextMessage: {
            text: 'yes, that one',
            contextInfo: { stanzaId: 'Q1', participant: ME_PN, quotedMessage: { conversation: 'this one?' } },
          },
        },
        messageTimestamp: T0,
        pushName: 'Alice',
      }),
    );
    expect(events).to.deep.equal([
      {
        type: 'MessageReceived',
        data: { upsert: 'notify', message: { id: 'A2', ...fromAlice, type: 'text', text: 'yes, that one', reply_to: 'Q1', quoted: { sender: ME_PN, text: 'this one?' } } },
      },
    ]);
  });

  describe('media', () => {
    const common = {
      mediaKey: bytes(1, 2, 3, 4),
      fileSha256: bytes(5, 6, 7),
      fileEncSha256: bytes(8, 9),
      directPath: '/v/t62.7118-24/abc?ccb=11-4',
    };
    const downloadable = {
      media_key: b64(common.mediaKey),
      file_sha256: b64(common.fileSha256),
      file_enc_sha256: b64(common.fileEncSha256),
      direct_path: common.directPath,
    };
    const received = (id: string, message: proto.IMessage): SessionEvent[] =>
      translate(upsert('notify', { key: { remoteJid: ALICE_PN, fromMe: false, id }, message, messageTimestamp: T0, pushName: 'Alice' }));

    it('carries an image with every field needed to download it (bytes as base64)', () => {
      const events = received('IMG', {
        imageMessage: {
          ...common,
          url: 'https://mmg.whatsapp.net/v/t62.7118-24/abc.enc',
          mimetype: 'image/jpeg',
          fileLength: 204_800,
          caption: 'look',
          width: 1280,
          height: 720,
          contextInfo: { stanzaId: 'Q2' },
        },
      });
      expect(events).to.deep.equal([
        {
          type: 'MessageReceived',
          data: {
            upsert: 'notify',
            message: {
              id: 'IMG',
              ...fromAlice,
              type: 'media',
              reply_to: 'Q2',
              media: {
                kind: 'image',
                url: 'https://mmg.whatsapp.net/v/t62.7118-24/abc.enc',
                ...downloadable,
                file_length: 204_800,
                mimetype: 'image/jpeg',
                caption: 'look',
                width: 1280,
                height: 720,
              },
            },
          },
        },
      ]);
    });

    it('carries a video with its duration', () => {
      const [event] = received('VID', {
        videoMessage: { ...common, url: 'https://mmg.whatsapp.net/v.enc', mimetype: 'video/mp4', fileLength: 3_000_000, seconds: 12, caption: 'clip' },
      });
      expect(event).to.deep.equal({
        type: 'MessageReceived',
        data: {
          upsert: 'notify',
          message: {
            id: 'VID',
            ...fromAlice,
            type: 'media',
            media: { kind: 'video', url: 'https://mmg.whatsapp.net/v.enc', ...downloadable, file_length: 3_000_000, mimetype: 'video/mp4', caption: 'clip', seconds: 12 },
          },
        },
      });
    });

    it('carries a voice note, building the URL from the direct path when the network gave none', () => {
      const [event] = received('AUD', { audioMessage: { ...common, mimetype: 'audio/ogg; codecs=opus', fileLength: 9000, seconds: 4, ptt: true } });
      expect(event).to.deep.equal({
        type: 'MessageReceived',
        data: {
          upsert: 'notify',
          message: {
            id: 'AUD',
            ...fromAlice,
            type: 'media',
            media: {
              kind: 'audio',
              url: `https://mmg.whatsapp.net${common.directPath}`,
              ...downloadable,
              file_length: 9000,
              mimetype: 'audio/ogg; codecs=opus',
              seconds: 4,
              ptt: true,
            },
          },
        },
      });
    });

    it('carries a document with its file name', () => {
      const [event] = received('DOC', {
        documentMessage: { ...common, url: 'https://mmg.whatsapp.net/d.enc', mimetype: 'application/pdf', fileLength: 52_000, fileName: 'invoice.pdf' },
      });
      expect(event).to.deep.equal({
        type: 'MessageReceived',
        data: {
          upsert: 'notify',
          message: {
            id: 'DOC',
            ...fromAlice,
            type: 'media',
            media: { kind: 'document', url: 'https://mmg.whatsapp.net/d.enc', ...downloadable, file_length: 52_000, mimetype: 'application/pdf', file_name: 'invoice.pdf' },
          },
        },
      });
    });

    it('keeps undownloadable media (no key) as "other" with its caption rather than a broken media record', () => {
      const [event] = received('BAD', { imageMessage: { url: 'https://mmg.whatsapp.net/x.enc', caption: 'lost', mimetype: 'image/jpeg' } });
      expect(event).to.deep.equal({ type: 'MessageReceived', data: { upsert: 'notify', message: { id: 'BAD', ...fromAlice, type: 'other', text: 'lost' } } });
    });

    it('unwraps view-once and ephemeral wrappers', () => {
      const [event] = received('VO', {
        viewOnceMessageV2: { message: { imageMessage: { ...common, url: 'https://mmg.whatsapp.net/vo.enc', mimetype: 'image/jpeg', fileLength: 1 } } },
      });
      expect(event?.type === 'MessageReceived' && event.data.message.media?.kind).to.equal('image');
    });
  });

  it('turns a reaction into a reaction message; an empty text removes it', () => {
    const events = translate(
      upsert(
        'notify',
        { key: { remoteJid: ALICE_PN, fromMe: false, id: 'R1' }, message: { reactionMessage: { key: { remoteJid: ALICE_PN, fromMe: true, id: 'M1' }, text: '👍' } }, messageTimestamp: T0, pushName: 'Alice' },
        { key: { remoteJid: ALICE_PN, fromMe: false, id: 'R2' }, message: { reactionMessage: { key: { remoteJid: ALICE_PN, fromMe: true, id: 'M1' }, text: '' } }, messageTimestamp: T0, pushName: 'Alice' },
      ),
    );
    expect(events).to.deep.equal([
      { type: 'MessageReceived', data: { upsert: 'notify', message: { id: 'R1', ...fromAlice, type: 'reaction', reaction: { message_id: 'M1', text: '👍', from_me: true } } } },
      { type: 'MessageReceived', data: { upsert: 'notify', message: { id: 'R2', ...fromAlice, type: 'reaction', reaction: { message_id: 'M1', text: '', from_me: true } } } },
    ]);
  });

  it('records a message sent from the phone as MessageSent from the device, sent by the account', () => {
    const events = translate(upsert('notify', { key: { remoteJid: ALICE_PN, fromMe: true, id: 'P1' }, message: { conversation: 'from my phone' }, messageTimestamp: T0 }));
    expect(events).to.deep.equal([
      {
        type: 'MessageSent',
        data: {
          origin: 'device',
          message: { id: 'P1', addressing_mode: 'pn', chat: ALICE_PN, sender: ME_PN, sender_pn: ME_PN, sender_lid: ME_LID_USER, from_me: true, is_group: false, timestamp_s: T0, type: 'text', text: 'from my phone' },
        },
      },
    ]);
  });

  it('keeps catch-up messages (append) apart from live ones, ours still as MessageSent', () => {
    const events = translate(
      upsert(
        'append',
        { key: { remoteJid: ALICE_PN, fromMe: false, id: 'OFF1' }, message: { conversation: 'while you were away' }, messageTimestamp: T0, pushName: 'Alice' },
        { key: { remoteJid: ALICE_PN, fromMe: true, id: 'OFF2' }, message: { conversation: 'answered on the phone' }, messageTimestamp: T0 + 1 },
      ),
    );
    expect(events.map((e) => [e.type, e.type === 'MessageReceived' ? e.data.upsert : e.type === 'MessageSent' ? e.data.origin : ''])).to.deep.equal([
      ['MessageReceived', 'append'],
      ['MessageSent', 'device'],
    ]);
  });

  it('leaves out what is not a user-visible message (protocol messages, stubs without content)', () => {
    const events = translate(
      upsert(
        'notify',
        { key: { remoteJid: ALICE_PN, fromMe: false, id: 'PROTO' }, message: { protocolMessage: { type: proto.Message.ProtocolMessage.Type.EPHEMERAL_SETTING, ephemeralExpiration: 86400 } }, messageTimestamp: T0 },
        { key: { remoteJid: ALICE_PN, fromMe: false, id: 'KEYS' }, message: { protocolMessage: { type: proto.Message.ProtocolMessage.Type.APP_STATE_SYNC_KEY_SHARE, appStateSyncKeyShare: { keys: [] } } }, messageTimestamp: T0 },
        { key: { remoteJid: GROUP, fromMe: false, id: 'STUB', participant: ALICE_PN }, messageStubType: proto.WebMessageInfo.StubType.GROUP_PARTICIPANT_ADD, messageTimestamp: T0 },
      ),
    );
    expect(events).to.deep.equal([]);
  });

  it('names the author of a group message and the group as the chat', () => {
    const events = translate(
      upsert('notify', { key: { remoteJid: GROUP, fromMe: false, id: 'G1', participant: `${BOB_PN.split('@')[0]}:3@s.whatsapp.net` }, message: { conversation: 'hi all' }, messageTimestamp: T0, pushName: 'Bob' }),
    );
    expect(events).to.deep.equal([
      {
        type: 'MessageReceived',
        data: { upsert: 'notify', message: { id: 'G1', addressing_mode: 'pn', chat: GROUP, sender: BOB_PN, sender_pn: BOB_PN, from_me: false, is_group: true, push_name: 'Bob', timestamp_s: T0, type: 'text', text: 'hi all' } },
      },
    ]);
  });

  describe('LID-addressed senders (Baileys 7 alternate jids)', () => {
    it('gives a 1:1 message from a LID both identities and teaches the pair before the message', () => {
      const events = translate(
        upsert('notify', { key: { remoteJid: ALICE_LID, remoteJidAlt: ALICE_PN, fromMe: false, id: 'L1' }, message: { conversation: 'from my lid' }, messageTimestamp: T0, pushName: 'Alice' }),
      );
      expect(events).to.deep.equal([
        { type: 'LidMappingLearned', data: { pairs: [{ pn: ALICE_PN, lid: ALICE_LID }] } },
        {
          type: 'MessageReceived',
          data: {
            upsert: 'notify',
            // Keyed by the phone jid, as CONTRACT.md's "Addresses" asks, with the LIDs beside it.
            message: {
              id: 'L1',
              chat: ALICE_PN,
              chat_lid: ALICE_LID,
              addressing_mode: 'lid',
              sender: ALICE_PN,
              sender_pn: ALICE_PN,
              sender_lid: ALICE_LID,
              from_me: false,
              is_group: false,
              push_name: 'Alice',
              timestamp_s: T0,
              type: 'text',
              text: 'from my lid',
            },
          },
        },
      ]);
    });

    it('reads the pair either way round, and from a group author (participantAlt)', () => {
      const events = translate(
        upsert(
          'notify',
          { key: { remoteJid: GROUP, participant: ALICE_LID, participantAlt: ALICE_PN, fromMe: false, id: 'L2' }, message: { conversation: 'a' }, messageTimestamp: T0 },
          { key: { remoteJid: BOB_PN, remoteJidAlt: 'ignored-not-a-jid', fromMe: false, id: 'L3' }, message: { conversation: 'b' }, messageTimestamp: T0 },
          { key: { remoteJid: GROUP, participant: BOB_PN, participantAlt: '300000000000003@lid', fromMe: false, id: 'L4' }, message: { conversation: 'c' }, messageTimestamp: T0 },
        ),
      );
      expect(events[0]).to.deep.equal({
        type: 'LidMappingLearned',
        data: {
          pairs: [
            { pn: ALICE_PN, lid: ALICE_LID },
            { pn: BOB_PN, lid: '300000000000003@lid' },
          ],
        },
      });
      const group = events[1];
      expect(group?.type === 'MessageReceived' && group.data.message).to.include({ chat: GROUP, sender: ALICE_PN, sender_pn: ALICE_PN, sender_lid: ALICE_LID, is_group: true, addressing_mode: 'lid' });
    });

    it('knows the peer of our own message to a LID chat', () => {
      const events = translate(
        upsert('notify', { key: { remoteJid: ALICE_LID, remoteJidAlt: ALICE_PN, fromMe: true, id: 'L5' }, message: { conversation: 'hi' }, messageTimestamp: T0 }),
      );
      expect(events.map((e) => e.type)).to.deep.equal(['LidMappingLearned', 'MessageSent']);
    });
  });

  it('carries the buttons of a card and the choice of a button reply', () => {
    const events = translate(
      upsert(
        'notify',
        {
          key: { remoteJid: ALICE_PN, fromMe: false, id: 'BTN' },
          message: {
            buttonsMessage: {
              contentText: 'Pick one',
              footerText: 'shop',
              buttons: [
                { buttonId: 'y', buttonText: { displayText: 'Yes' } },
                { buttonId: 'n', buttonText: { displayText: 'No' } },
              ],
            },
          },
          messageTimestamp: T0,
          pushName: 'Alice',
        },
        {
          key: { remoteJid: ALICE_PN, fromMe: false, id: 'BTNR' },
          message: { buttonsResponseMessage: { selectedButtonId: 'y', selectedDisplayText: 'Yes', contextInfo: { stanzaId: 'CARD' } } },
          messageTimestamp: T0,
          pushName: 'Alice',
        },
      ),
    );
    expect(events).to.deep.equal([
      {
        type: 'MessageReceived',
        data: {
          upsert: 'notify',
          message: {
            id: 'BTN',
            ...fromAlice,
            type: 'buttons',
            text: 'Pick one',
            buttons: { footer: 'shop', items: [{ id: 'y', text: 'Yes' }, { id: 'n', text: 'No' }] },
          },
        },
      },
      {
        type: 'MessageReceived',
        data: { upsert: 'notify', message: { id: 'BTNR', ...fromAlice, type: 'buttons', text: 'Yes', reply_to: 'CARD', buttons: { items: [{ id: 'y', text: 'Yes' }] } } },
      },
    ]);
  });

  describe('kinds that used to arrive as an empty "other"', () => {
    const one = (id: string, message: proto.IMessage): NetworkMessage => {
      const [event] = translate(upsert('notify', { key: { remoteJid: ALICE_PN, fromMe: false, id }, message, messageTimestamp: T0, pushName: 'Alice' }));
      if (event?.type !== 'MessageReceived') throw new Error(`no message for ${id}`);
      return event.data.message;
    };
    const media = { mediaKey: bytes(1, 2), fileSha256: bytes(3), fileEncSha256: bytes(4), directPath: '/v/t62/ptv', mimetype: 'video/mp4', fileLength: 1000, seconds: 7 };

    it('a video note (ptvMessage) keeps its media, downloadable, and goes out as ptvMessage', () => {
      const m = one('PTV', { ptvMessage: { ...media, url: 'https://mmg.whatsapp.net/ptv.enc' } });
      expect(m.type).to.equal('media');
      expect(m.media).to.deep.include({ kind: 'video', ptv: true, url: 'https://mmg.whatsapp.net/ptv.enc', media_key: b64(media.mediaKey), seconds: 7 });
      expect(messageEvent(m).Info).to.include({ Type: 'media', MediaType: 'video' });
      expect(messageEvent(m).Message).to.have.key('ptvMessage');
      expect(messageEvent(m).Message.ptvMessage).to.include({ URL: 'https://mmg.whatsapp.net/ptv.enc', mediaKey: b64(media.mediaKey), seconds: 7 });
    });

    it('replies to a list and to an interactive card are button replies: the chosen id, its label, the card replied to', () => {
      const list = one('LR', { listResponseMessage: { title: 'Large', singleSelectReply: { selectedRowId: 'size-l' }, contextInfo: { stanzaId: 'LIST1' } } });
      expect(list).to.deep.include({ type: 'buttons', text: 'Large', reply_to: 'LIST1', buttons: { items: [{ id: 'size-l', text: 'Large' }] } });
      const flow = one('IR', {
        interactiveResponseMessage: {
          body: { text: 'Confirm' },
          nativeFlowResponseMessage: { name: 'quick_reply', paramsJson: JSON.stringify({ id: 'ok-1' }), version: 3 },
          contextInfo: { stanzaId: 'CARD2' },
        },
      });
      expect(flow).to.deep.include({ type: 'buttons', text: 'Confirm', reply_to: 'CARD2', buttons: { items: [{ id: 'ok-1', text: 'Confirm' }] } });
      expect(messageEvent(flow).Message).to.deep.equal({ buttonsMessage: { contentText: 'Confirm', buttons: [{ buttonID: 'ok-1', buttonText: { displayText: 'Confirm' } }] } });
    });

    it('an album says how many images and videos follow; an event and a group invitation keep what they say', () => {
      const album = one('AL', { albumMessage: { expectedImageCount: 3, expectedVideoCount: 1 } });
      expect(album).to.deep.include({ type: 'other', album: { images: 3, videos: 1 } });
      expect(messageEvent(album).Message).to.deep.equal({ albumMessage: { expectedImageCount: 3, expectedVideoCount: 1 } });

      const event = one('EV', {
        eventMessage: { name: 'Launch', description: 'v2 is out', startTime: T0 + 3600, endTime: T0 + 7200, location: { degreesLatitude: -23.5, degreesLongitude: -46.6, name: 'Office' }, joinLink: 'https://call.whatsapp.com/video/x' },
      });
      expect(event).to.deep.include({
        type: 'other',
        event: { name: 'Launch', description: 'v2 is out', start_s: T0 + 3600, end_s: T0 + 7200, location: { latitude: -23.5, longitude: -46.6, name: 'Office' }, join_link: 'https://call.whatsapp.com/video/x' },
      });
      expect(messageEvent(event).Message.eventMessage).to.include({ name: 'Launch', startTime: new Date((T0 + 3600) * 1000).toISOString(), isCanceled: false });

      const invite = one('GI', { groupInviteMessage: { groupJid: GROUP, inviteCode: 'AbCdEf123', inviteExpiration: T0 + 86_400, groupName: 'Team', caption: 'join us' } });
      expect(invite).to.deep.include({ type: 'other', text: 'join us', group_invite: { group: GROUP, code: 'AbCdEf123', expires_s: T0 + 86_400, group_name: 'Team', caption: 'join us' } });
      expect(messageEvent(invite).Message).to.deep.equal({
        groupInviteMessage: { groupJID: GROUP, inviteCode: 'AbCdEf123', inviteExpiration: new Date((T0 + 86_400) * 1000).toISOString(), groupName: 'Team', caption: 'join us' },
      });
    });

    it('keeps the people a message mentions, named by phone jid when the pair is known', () => {
      const m = translate(
        upsert('notify', {
          key: { remoteJid: GROUP, participant: ALICE_PN, fromMe: false, id: 'MEN' },
          message: { extendedTextMessage: { text: '@bob @me look', contextInfo: { mentionedJid: [ALICE_LID, ME_PN, ME_PN] } } },
          messageTimestamp: T0,
        }),
        context({ pnOf: (lid) => (lid === ALICE_LID ? ALICE_PN : undefined) }),
      ).find((e) => e.type === 'MessageReceived');
      const message = m?.type === 'MessageReceived' ? m.data.message : undefined;
      expect(message?.mentions).to.deep.equal([ALICE_PN, ME_PN]);
      expect(messageEvent(message!).Message).to.deep.equal({ extendedTextMessage: { text: '@bob @me look', contextInfo: { mentionedJID: [ALICE_PN, ME_PN] } } });
    });
  });

  it('sends nothing for a message it cannot place (no chat or no id)', () => {
    const events = translate(upsert('notify', { key: { fromMe: false, id: 'NOCHAT' }, message: { conversation: 'x' }, messageTimestamp: T0 }));
    expect(events).to.deep.equal([]);
  });
});
