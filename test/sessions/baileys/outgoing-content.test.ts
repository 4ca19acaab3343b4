import { decryptPollVote as baileysDecryptPollVote, generateWAMessage, generateWAMessageFromContent, proto, type AnyMessageContent, type WAMessage } from '@whiskeysockets/baileys';
import { expect } from 'chai';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import sharp from 'sharp';
import type { OutgoingContent } from '../../../src/domain/session/outgoing.js';
import { decryptPollVote, encryptPollVote, optionHash } from '../../../src/infra/crypto/poll-vote.js';
import { decryptMedia } from '../../../src/infra/crypto/whatsapp-media.js';
import { uploadMedia } from '../../../src/sessions/baileys/baileys-sending.js';
import { changeContent, LIST_FALLBACK, outgoing } from '../../../src/sessions/baileys/outgoing-content.js';
import { translateMessage } from '../../../src/sessions/baileys/message-translator.js';
import type { BaileysSocket } from '../../../src/sessions/baileys/socket.js';
import { ALICE_PN, GROUP, ME, ME_PN } from './support.js';

const logger = pino({ level: 'silent' });
const ctx = { me: { jid: ME } };

/** Built by Baileys rc14's own generateWAMessage, as sock.sendMessage builds it, then through the wire encoding. */
async function built(jid: string, content: AnyMessageContent): Promise<WAMessage> {
  const msg = await generateWAMessage(jid, content, { userJid: ME, upload: () => Promise.reject(new Error('no upload here')), logger, messageId: 'OUT1' } as never);
  return proto.WebMessageInfo.decode(proto.WebMessageInfo.encode(msg).finish()) as WAMessage;
}

const viaContent = (c: OutgoingContent, context = {}) => {
  const out = outgoing(c, context);
  if (out.via !== 'content') throw new Error('expected sendMessage content');
  return out;
};

describe('Baileys: outgoing messages built as rc14 builds them (generateWAMessage*)', () => {
  it('a text carries its mentions and its quote, and no link preview is fetched by Baileys', async () => {
    const quote = { stanzaId: 'Q1', participant: ALICE_PN, quotedMessage: { conversation: 'which?' } };
    const msg = await built(ALICE_PN, viaContent({ kind: 'text', text: 'see https://example.com', link_preview: false }, { quote, mentions: [ALICE_PN] }).content);
    const ext = msg.message?.extendedTextMessage;
    expect(ext?.text).to.equal('see https://example.com');
    expect(ext?.contextInfo?.mentionedJid).to.deep.equal([ALICE_PN]);
    expect(ext?.contextInfo?.stanzaId).to.equal('Q1');
    expect(ext?.matchedText ?? undefined).to.equal(undefined);
    const back = translateMessage(msg, ctx);
    expect(back).to.deep.include({ type: 'text', reply_to: 'Q1', mentions: [ALICE_PN], from_me: true });
  });

  it("a text's preview, fetched by the gateway, is built into the message by generateWAMessage (title, description, matched link)", async () => {
    const preview = { url: 'https://shop.example.com/o/42', title: 'Order 42', description: 'Shipped today' };
    const msg = await built(ALICE_PN, viaContent({ kind: 'text', text: 'see https://shop.example.com/o/42', preview }).content);
    const ext = msg.message?.extendedTextMessage;
    expect(ext).to.deep.include({ text: 'see https://shop.example.com/o/42', matchedText: preview.url, title: 'Order 42', description: 'Shipped today' });
    // link_preview false wins over a preview the content carries.
    const off = await built(ALICE_PN, viaContent({ kind: 'text', text: 'see https://shop.example.com/o/42', preview, link_preview: false }).content);
    expect(off.message?.extendedTextMessage?.title ?? off.message?.conversation ?? undefined).to.not.equal('Order 42');
  });

  it('a poll keeps the secret it was built with, and a vote encrypted with it opens in Baileys and here', async () => {
    const out = viaContent({ kind: 'poll', poll: { name: 'When?', options: ['Morning', 'Evening'], selectable_count: 1 } });
    const msg = await built(ALICE_PN, out.content);
    expect(msg.message?.pollCreationMessageV3?.options?.map((o) => o.optionName)).to.deep.equal(['Morning', 'Evening']);
    expect(Buffer.from(msg.message?.messageContextInfo?.messageSecret ?? []).equals(out.pollSecret as Buffer)).to.equal(true);
    const poll = translateMessage(msg, ctx);
    expect(poll?.poll?.message_secret).to.equal((out.pollSecret as Buffer).toString('base64'));
    const binding = { pollMessageId: 'OUT1', creatorJid: ME_PN, voterJid: ALICE_PN };
    const vote = encryptPollVote(out.pollSecret as Buffer, binding, ['Evening']);
    const opened = baileysDecryptPollVote(vote, { pollCreatorJid: ME_PN, pollMsgId: 'OUT1', pollEncKey: out.pollSecret as Buffer, voterJid: ALICE_PN });
    expect(opened.selectedOptions.map((h) => Buffer.from(h).toString('hex'))).to.deep.equal([optionHash('Evening').toString('hex')]);
    expect(decryptPollVote(out.pollSecret as Buffer, binding, vote.encPayload, vote.encIv).map((h) => h.toString('hex'))).to.deep.equal([optionHash('Evening').toString('hex')]);
    expect(() => decryptPollVote(out.pollSecret as Buffer, { ...binding, voterJid: ME_PN }, vote.encPayload, vote.encIv)).to.throw();
  });

  it('locations, contact cards and list fallbacks', async () => {
    const loc = await built(ALICE_PN, viaContent({ kind: 'location', location: { latitude: 1.5, longitude: -2.25, name: 'Store', address: 'Main St' } }).content);
    expect(loc.message?.locationMessage).to.include({ degreesLatitude: 1.5, degreesLongitude: -2.25, name: 'Store', address: 'Main St' });
    const card = await built(ALICE_PN, viaContent({ kind: 'contact', contacts: [{ display_name: 'Ana', vcard: 'BEGIN:VCARD\nFN:Ana\nEND:VCARD' }] }).content);
    expect(card.message?.contactMessage).to.include({ displayName: 'Ana' });
    const two = await built(ALICE_PN, viaContent({ kind: 'contact', contacts: [{ display_name: 'A', vcard: 'x' }, { display_name: 'B', vcard: 'y' }] }).content);
    expect(two.message?.contactsArrayMessage?.contacts).to.have.length(2);
    const list = viaContent({ kind: 'list', text: 'Pick', list: { button_text: 'Plans', title: 'Plans', sections: [{ title: 'M', rows: [{ id: 'b', title: 'Basic', description: '$1' }] }] } });
    expect(list.fallback).to.equal(LIST_FALLBACK);
    expect((await built(ALICE_PN, list.content)).message?.extendedTextMessage?.text).to.equal('*Plans*\n\nPick\n\n*M*\n1. Basic - $1');
  });

  it('edits, deletions (ours, and an admin deleting a member\'s) and reactions naming the author', async () => {
    const edit = await built(ALICE_PN, changeContent(ALICE_PN, { kind: 'edit', message_id: 'M1', text: 'fixed' }));
    expect(edit.message?.protocolMessage?.type).to.equal(proto.Message.ProtocolMessage.Type.MESSAGE_EDIT);
    expect(edit.message?.protocolMessage?.editedMessage?.extendedTextMessage?.text).to.equal('fixed');
    expect(translateMessage(edit, ctx)).to.deep.include({ type: 'edit', edit: { message_id: 'M1' }, text: 'fixed' });
    const del = await built(GROUP, changeContent(GROUP, { kind: 'revoke', message_id: 'M2', from_me: false, participant: ALICE_PN }));
    expect(del.message?.protocolMessage?.key).to.deep.include({ id: 'M2', fromMe: false, participant: ALICE_PN });
    const react = await built(GROUP, { react: { text: '👍', key: { remoteJid: GROUP, id: 'M3', fromMe: false, participant: ALICE_PN } } });
    expect(translateMessage(react, ctx)?.reaction).to.deep.include({ message_id: 'M3', from_me: false, participant: ALICE_PN });
  });

  it('forwards a stored message, marked as forwarded', async () => {
    const stored = { id: 'S1', chat: ALICE_PN, sender: ALICE_PN, from_me: false, is_group: false, timestamp_s: 1, type: 'text' as const, text: 'pass it on' };
    const msg = await built(GROUP, viaContent({ kind: 'forward', message: stored }).content);
    expect(msg.message?.extendedTextMessage?.text).to.equal('pass it on');
    expect(msg.message?.extendedTextMessage?.contextInfo?.isForwarded).to.equal(true);
    expect(translateMessage(msg, ctx)).to.deep.include({ text: 'pass it on', forwarded: true });
  });

  it('uploads through prepareWAMessageMedia and sends the uploaded media (voice note, view-once image) without a second upload', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-bl-'));
    const file = join(dir, 'note.ogg');
    const plain = Buffer.from('OggS fake opus bytes for the test, encrypted by Baileys');
    writeFileSync(file, plain);
    const uploads: Buffer[] = [];
    const sock = {
      waUploadToServer: async (path: string) => {
        uploads.push(readFileSync(path));
        return { mediaUrl: 'https://mmg.whatsapp.net/v/t62/x.enc', directPath: '/v/t62/x.enc' };
      },
    } as unknown as BaileysSocket;
    const waveform = new Uint8Array(64).fill(50);
    const media = await uploadMedia(sock, { kind: 'audio', path: file, length: plain.length, mimetype: 'audio/ogg; codecs=opus', ptt: true, seconds: 3, waveform }, logger);
    expect(media).to.include({ kind: 'audio', ptt: true, seconds: 3, url: 'https://mmg.whatsapp.net/v/t62/x.enc', direct_path: '/v/t62/x.enc' });
    // What went up is the file, encrypted under the key the message carries.
    expect(decryptMedia('audio', uploads[0] as Buffer, Buffer.from(media.media_key, 'base64'), { fileSha256: Buffer.from(media.file_sha256, 'base64') }).equals(plain)).to.equal(true);
    const out = outgoing({ kind: 'media', media, mentions: [ALICE_PN] });
    if (out.via !== 'message') throw new Error('media goes as the finished message');
    const msg = generateWAMessageFromContent(ALICE_PN, out.message, { userJid: ME, messageId: 'OUT2' });
    const wire = proto.WebMessageInfo.decode(proto.WebMessageInfo.encode(msg).finish()) as WAMessage;
    expect(wire.message?.audioMessage).to.include({ ptt: true, seconds: 3 });
    expect(Buffer.from(wire.message?.audioMessage?.waveform ?? []).equals(Buffer.from(waveform))).to.equal(true);
    const back = translateMessage(wire, ctx);
    expect(back?.media).to.include({ kind: 'audio', media_key: media.media_key, file_sha256: media.file_sha256, ptt: true });
    expect(back?.mentions).to.deep.equal([ALICE_PN]);

    const png = join(dir, 'p.png');
    writeFileSync(png, await sharp({ create: { width: 40, height: 30, channels: 3, background: '#00f' } }).png().toBuffer());
    const image = await uploadMedia(sock, { kind: 'image', path: png, length: 1, mimetype: 'image/png' }, logger);
    expect(image).to.include({ width: 40, height: 30 });
    expect(image.thumbnail, 'Baileys makes the thumbnail with sharp').to.be.a('string');
    const once = outgoing({ kind: 'media', media: { ...image, caption: 'once' }, view_once: true });
    if (once.via !== 'message') throw new Error('media goes as the finished message');
    const sent = generateWAMessageFromContent(ALICE_PN, once.message, { userJid: ME, messageId: 'OUT3' });
    expect(translateMessage(sent, ctx)).to.deep.include({ type: 'media', view_once: true });
    expect(uploads).to.have.length(2);
  });
});
