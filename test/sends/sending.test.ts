/* eslint-disable @typescript-eslint/no-explicit-any -- test answers are read field by field */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { eventData, pairedInstance, phoneSends, recorded } from '../support/chats.js';
import { newPhone, waitFor } from '../support/sandbox.js';
import { useGateway } from '../support/use-gateway.js';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const b64 = (b: Buffer) => b.toString('base64');

/** A real MP3 (one second of a tone), made with the ffmpeg the gateway converts with. */
function mp3(): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'gw-mp3-'));
  const out = join(dir, 'tone.mp3');
  execFileSync('ffmpeg', ['-loglevel', 'error', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=2', '-y', out]);
  return readFileSync(out);
}

describe('sending every kind over HTTP, checked at the far end (sandbox)', function () {
  this.timeout(60_000);
  const { t, owner } = useGateway({ MESSAGING_NETWORK: 'sandbox' });
  let me: { id: string; phone: string; jid: string };
  let peer: { id: string; phone: string; jid: string };
  let png: Buffer;
  let files: Server;
  let filesUrl: string;

  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    t.api('POST', `/instances/${me.id}/chat/${path}`, { token: owner.jwt, body, headers });
  const inbox = async (phone: string) => (await t.api('GET', `/sandbox/phones/${phone}/inbox`, { token: owner.jwt })).body.messages as any[];
  const item = async (phone: string, id: string) => {
    let found: any;
    await waitFor(async () => !!(found = (await inbox(phone)).find((m) => m.message_id === id)), `inbox item ${id}`);
    return found;
  };
  const received = async (phone: string, id: string) => {
    const res = await fetch(`${t.gateway.url}/sandbox/phones/${phone}/inbox/${id}/media`, { headers: { authorization: `Bearer ${owner.jwt}` } });
    expect(res.status).to.equal(200);
    return { type: res.headers.get('content-type'), bytes: Buffer.from(await res.arrayBuffer()) };
  };
  // Read at once: a send answers only once its message is in the messages model (read-your-writes).
  const status = async (id: string) => (await t.api('GET', `/instances/${me.id}/messages/${id}`, { token: owner.jwt })).body?.data;
  const sentCount = async () => (await eventData(t, me.id, 'MessageSent')).length;

  before(async () => {
    me = await pairedInstance(t, owner);
    peer = await pairedInstance(t, owner);
    png = await sharp({ create: { width: 64, height: 48, channels: 4, background: { r: 200, g: 30, b: 30, alpha: 1 } } }).png().toBuffer();
    files = createServer((req, res) => {
      if (req.url === '/photo.png') return res.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length }).end(png);
      if (req.url === '/order.html') return res.writeHead(200, { 'content-type': 'text/html' }).end('<html><head><meta property="og:title" content="Order 42"><meta property="og:description" content="Shipped today"></head><body>…</body></html>');
      if (req.url === '/big.bin') return res.writeHead(200, { 'content-length': String(200 * 1024 * 1024) }).end();
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => files.listen(0, '127.0.0.1', () => r()));
    filesUrl = `http://127.0.0.1:${(files.address() as { port: number }).port}`;
  });
  after(() => new Promise<void>((r) => files.close(() => r())));

  it('sends text with a mention and a quote; answers {message_id, jid, status, timestamp}', async () => {
    const question = await phoneSends(t, owner, peer.phone, me.phone, { text: 'which size?' });
    await recorded(t, me.id, 'MessageReceived', (d) => d.message.id === question);
    const res = await post('send/text', { phone: peer.phone, message: `@${peer.phone} medium`, reply_to: question, mentions: [peer.phone], link_preview: false });
    expect(res.status, res.text).to.equal(200);
    expect(res.body.data).to.include({ jid: peer.jid, status: 'sent' });
    expect(res.body.data.timestamp).to.match(/^\d{4}-\d\d-\d\dT/);
    const got = await item(peer.phone, res.body.data.message_id);
    expect(got).to.deep.include({ type: 'text', text: `@${peer.phone} medium`, reply_to: question, mentions: [peer.jid] });
    expect((await status(res.body.data.message_id)).status).to.be.oneOf(['sent', 'delivered']);
  });

  it("previews a text's link at the far end (fetched by the gateway), and not when link_preview is false", async () => {
    const link = `${filesUrl}/order.html`;
    const res = await post('send/text', { phone: peer.phone, message: `Your order: ${link}` });
    expect(res.status, res.text).to.equal(200);
    expect((await item(peer.phone, res.body.data.message_id)).link_preview).to.deep.equal({ url: link, title: 'Order 42', description: 'Shipped today' });
    const sent = await recorded(t, me.id, 'MessageSent', (d) => d.message.id === res.body.data.message_id);
    expect(sent.message.link_preview).to.deep.include({ title: 'Order 42' });
    const off = await post('send/text', { phone: peer.phone, message: `Again: ${link}`, link_preview: false });
    expect((await item(peer.phone, off.body.data.message_id)).link_preview).to.equal(undefined);
  });

  it('sends an image from {data} and one from {url}: the phone decrypts the very bytes sent', async () => {
    const fromData = await post('send/image', { phone: peer.phone, media: { data: b64(png) }, caption: 'red' });
    expect(fromData.status, fromData.text).to.equal(200);
    const a = await item(peer.phone, fromData.body.data.message_id);
    expect(a).to.deep.include({ type: 'image', caption: 'red' });
    expect(a.media).to.include({ mimetype: 'image/png', file_length: png.length, sha256: sha(png) });
    expect((await received(peer.phone, a.message_id)).bytes.equals(png)).to.equal(true);

    const fromUrl = await post('send/image', { phone: peer.phone, media: { url: `${filesUrl}/photo.png` } });
    expect(fromUrl.status, fromUrl.text).to.equal(200);
    expect((await received(peer.phone, fromUrl.body.data.message_id)).bytes.equals(png)).to.equal(true);
  });

  it('converts an MP3 into a voice note (OGG/Opus) with its duration and waveform', async () => {
    const res = await post('send/audio', { phone: peer.phone, media: { data: b64(mp3()) } });
    expect(res.status, res.text).to.equal(200);
    const got = await item(peer.phone, res.body.data.message_id);
    expect(got.type).to.equal('audio');
    expect(got.media).to.include({ mimetype: 'audio/ogg; codecs=opus', voice: true, waveform: true, seconds: 2 });
    const file = await received(peer.phone, got.message_id);
    expect(file.bytes.subarray(0, 4).toString()).to.equal('OggS');
    expect(file.bytes.includes(Buffer.from('OpusHead'))).to.equal(true);
  });

  it('sends a document under its name, and a PNG sticker as a 512×512 WebP', async () => {
    const doc = await post('send/document', { phone: peer.phone, media: { data: b64(Buffer.from('a,b\n1,2\n')), mimetype: 'text/csv' }, file_name: 'report.csv' });
    expect(doc.status, doc.text).to.equal(200);
    expect((await item(peer.phone, doc.body.data.message_id)).media).to.include({ file_name: 'report.csv', mimetype: 'text/csv' });
    const sticker = await post('send/sticker', { phone: peer.phone, media: { data: b64(png) } });
    expect(sticker.status, sticker.text).to.equal(200);
    const got = await item(peer.phone, sticker.body.data.message_id);
    expect(got.type).to.equal('sticker');
    const meta = await sharp((await received(peer.phone, got.message_id)).bytes).metadata();
    expect(meta).to.include({ format: 'webp', width: 512, height: 512 });
  });

  it('sends a location, contact cards (vCards built by the gateway) and a list', async () => {
    const loc = await post('send/location', { phone: peer.phone, latitude: -23.56, longitude: -46.65, name: 'Store', address: 'Av. Paulista' });
    expect((await item(peer.phone, loc.body.data.message_id)).location).to.deep.equal({ latitude: -23.56, longitude: -46.65, name: 'Store', address: 'Av. Paulista' });
    const card = await post('send/contact', { phone: peer.phone, contacts: [{ name: 'Ana Lima', phones: ['5511988887777'], email: 'ana@example.com' }] });
    const contacts = (await item(peer.phone, card.body.data.message_id)).contacts;
    expect(contacts[0].display_name).to.equal('Ana Lima');
    expect(contacts[0].vcard).to.include('FN:Ana Lima').and.include('waid=5511988887777:+5511988887777').and.include('EMAIL:ana@example.com');
    const list = await post('send/list', { phone: peer.phone, text: 'Pick', button_text: 'Plans', sections: [{ title: 'M', rows: [{ id: 'b', title: 'Basic' }] }] });
    expect(list.status, list.text).to.equal(200);
    expect((await item(peer.phone, list.body.data.message_id)).list).to.deep.include({ button_text: 'Plans' });
  });

  it('sends a poll; a phone votes; the vote arrives decrypted and the message tallies it', async () => {
    const res = await post('send/poll', { phone: peer.phone, name: 'When?', options: ['Morning', 'Evening'], selectable_count: 1 });
    expect(res.status, res.text).to.equal(200);
    const id = res.body.data.message_id;
    expect((await item(peer.phone, id)).poll).to.deep.equal({ name: 'When?', options: ['Morning', 'Evening'], selectable_count: 1 });
    const vote = await t.api('POST', `/sandbox/phones/${peer.phone}/messages/${id}/vote`, { token: owner.jwt, body: { options: ['Evening'] } });
    expect(vote.status, vote.text).to.equal(201);
    const got = await recorded(t, me.id, 'MessageReceived', (d) => d.message.type === 'poll_vote');
    expect(got.message.poll_vote).to.include({ poll_message_id: id });
    expect(got.message.poll_vote.selected_options).to.deep.equal(['Evening']);
    expect(got.message.poll_vote.enc_payload).to.be.a('string');
    await waitFor(async () => (await status(id))?.poll?.options?.[1]?.votes === 1, 'the tally');
    expect((await status(id)).poll.options).to.deep.equal([{ name: 'Morning', votes: 0 }, { name: 'Evening', votes: 1 }]);
  });

  it('edits, forwards and deletes for everyone; shows typing at the far end', async () => {
    const res = await post('send/text', { phone: peer.phone, message: 'opens at 8' });
    const id = res.body.data.message_id;
    const edit = await post('edit', { phone: peer.phone, message_id: id, message: 'opens at 9' });
    expect(edit.status, edit.text).to.equal(200);
    await waitFor(async () => (await item(peer.phone, id)).edited_text === 'opens at 9', 'the edit at the far end');
    const third = await newPhone(t.api, owner);
    const fwd = await post('forward', { phone: third.phone, message_id: id });
    expect(fwd.status, fwd.text).to.equal(200);
    expect(await item(third.phone, fwd.body.data.message_id)).to.deep.include({ text: 'opens at 8', forwarded: true });
    const del = await post('revoke', { phone: peer.phone, message_id: id });
    expect(del.status, del.text).to.equal(200);
    await waitFor(async () => (await item(peer.phone, id)).revoked === true, 'the deletion at the far end');
    await waitFor(async () => (await status(id))?.revoked === true, 'revoked in the message');
    expect((await post('presence', { phone: peer.phone, state: 'composing' })).status).to.equal(200);
    const seen = await t.api('GET', `/sandbox/phones/${peer.phone}/chat-presence`, { token: owner.jwt });
    expect(seen.body.presences).to.deep.include.members([{ chat: me.jid, from: me.jid, state: 'composing', at: seen.body.presences[0].at }]);
  });

  it("refuses another's message for an edit or a deletion outside a group it administers", async () => {
    const theirs = await phoneSends(t, owner, peer.phone, me.phone, { text: 'mine' });
    await recorded(t, me.id, 'MessageReceived', (d) => d.message.id === theirs);
    expect((await post('edit', { phone: peer.phone, message_id: theirs, message: 'x' })).status).to.equal(403);
    expect((await post('revoke', { phone: peer.phone, message_id: theirs })).status).to.equal(403);
  });

  it('a restricted recipient: the network takes the send, then refuses it (ReadReceipt Failed, 463)', async () => {
    const blocked = await newPhone(t.api, owner, { restricted: true });
    const res = await post('send/text', { phone: blocked.phone, message: 'hello?' });
    expect(res.status, res.text).to.equal(200);
    const id = res.body.data.message_id;
    const failed = await recorded(t, me.id, 'ReceiptReceived', (d) => d.state === 'Failed' && d.message_ids.includes(id));
    expect(failed.error.code).to.equal(463);
    await waitFor(async () => (await status(id))?.status === 'failed', 'status failed');
    expect((await status(id)).error.code).to.equal(463);
  });

  it('schedules a send, shows it scheduled, cancels it; a canceled send never goes out', async () => {
    const at = new Date(Date.now() + 60_000).toISOString();
    const res = await post('send/text', { phone: peer.phone, message: 'later', send_at: at });
    expect(res.status, res.text).to.equal(200);
    expect(res.body.data).to.include({ status: 'scheduled', timestamp: at });
    const id = res.body.data.message_id;
    await waitFor(async () => (await status(id))?.status === 'scheduled', 'scheduled');
    const cancel = await t.api('DELETE', `/instances/${me.id}/messages/${id}`, { token: owner.jwt });
    expect(cancel.status, cancel.text).to.equal(200);
    await waitFor(async () => (await status(id))?.status === 'canceled', 'canceled');
    expect((await t.api('DELETE', `/instances/${me.id}/messages/${id}`, { token: owner.jwt })).status).to.equal(404);
  });

  it('sends a scheduled message at its time, once', async () => {
    const at = new Date(Date.now() + 11_000);
    const res = await post('send/text', { phone: peer.phone, message: 'on time', send_at: at.toISOString() });
    const id = res.body.data.message_id;
    const got = await waitFor(async () => (await inbox(peer.phone)).some((m) => m.message_id === id), 'the scheduled send', 30_000).then(() => item(peer.phone, id));
    expect(Date.parse(got.timestamp)).to.be.at.least(at.getTime() - 1000);
    await waitFor(async () => (await status(id))?.status !== 'scheduled', 'sent');
    expect((await inbox(peer.phone)).filter((m) => m.message_id === id)).to.have.length(1);
  });

  it('answers bad input with a clear 4xx, and sends and stores nothing', async () => {
    const before = await sentCount();
    const beforeInbox = (await inbox(peer.phone)).length;
    const elf = readFileSync('/bin/ls');
    const cases: [string, unknown, number][] = [
      ['send/image', { phone: peer.phone, media: { data: b64(elf) } }, 400],
      ['send/video', { phone: peer.phone, media: { data: b64(png) } }, 400],
      ['send/audio', { phone: peer.phone, media: { data: b64(png) } }, 400],
      ['send/image', { phone: peer.phone, media: { url: 'file:///etc/passwd' } }, 400],
      ['send/image', { phone: peer.phone, media: { url: `${filesUrl}/big.bin` } }, 413],
      ['send/poll', { phone: peer.phone, name: 'q', options: Array.from({ length: 13 }, (_, i) => `o${i}`) }, 400],
      ['send/poll', { phone: peer.phone, name: 'q', options: ['a', 'a'] }, 400],
      ['send/poll', { phone: peer.phone, name: 'q', options: ['a', 'b'], selectable_count: 3 }, 400],
      ['send/text', { phone: peer.phone, message: 'x', send_at: new Date(Date.now() - 1000).toISOString() }, 400],
      ['send/text', { phone: peer.phone, message: 'x', send_at: new Date(Date.now() + 31 * 86_400_000).toISOString() }, 400],
      ['send/text', { phone: peer.phone, message: 'x', reply_to: 'NOSUCHMESSAGE' }, 400],
      ['send/text', { phone: peer.phone, message: 'x', mentions: ['5511000000001'] }, 400],
      ['send/text', { phone: '5511000000001', message: 'x' }, 400],
      ['edit', { phone: peer.phone, message_id: 'NOSUCHMESSAGE', message: 'x' }, 404],
    ];
    for (const [path, body, code] of cases) {
      const res = await post(path, body);
      expect(res.status, `${path} ${JSON.stringify(body).slice(0, 120)}: ${res.text}`).to.equal(code);
      expect(res.body.success).to.equal(false);
    }
    expect(await sentCount()).to.equal(before);
    expect((await inbox(peer.phone)).length).to.equal(beforeInbox);
  });

  it('sends to a LID jid, and answers the LID as the chat', async () => {
    const hidden = await newPhone(t.api, owner, { addressing: 'lid' });
    const lid = (hidden as any).lid as string;
    const res = await post('send/text', { phone: lid, message: 'by lid' });
    expect(res.status, res.text).to.equal(200);
    expect(res.body.data.jid).to.equal(lid);
    expect(await item(hidden.phone, res.body.data.message_id)).to.deep.include({ text: 'by lid' });
  });

  it('answers a repeated Idempotency-Key with the first answer and sends once', async () => {
    const headers = { 'idempotency-key': `img-${Date.now()}` };
    const body = { phone: peer.phone, media: { data: b64(png) } };
    const first = await post('send/image', body, headers);
    const again = await post('send/image', body, headers);
    expect(again.body).to.deep.equal(first.body);
    expect((await inbox(peer.phone)).filter((m) => m.message_id === first.body.data.message_id)).to.have.length(1);
  });

  it('documents every send route and message action in OpenAPI, with a request and an answer example', async () => {
    const doc = (await t.api('GET', '/openapi.json')).body;
    const kinds = ['text', 'image', 'video', 'audio', 'document', 'sticker', 'location', 'contact', 'poll', 'list', 'buttons'];
    const routes: [string, string][] = [
      ...kinds.map((k): [string, string] => [`/instances/{id}/chat/send/${k}`, 'post']),
      ...['edit', 'revoke', 'forward', 'presence', 'react'].map((a): [string, string] => [`/instances/{id}/chat/${a}`, 'post']),
      ['/instances/{id}/messages/{message_id}', 'delete'],
    ];
    for (const [path, method] of routes) {
      const op = doc.paths[path]?.[method];
      expect(op, `${method} ${path}`).to.be.an('object');
      if (method === 'post') {
        const examples = op.requestBody.content['application/json'].schema.examples;
        expect(examples, `${path} request examples`).to.be.an('array').that.is.not.empty;
        // Each example is a body the route takes: it names the address and nothing it would refuse.
        expect(examples[0], path).to.have.property('phone');
      }
      const ok = op.responses['200'].content['application/json'].schema;
      expect(ok.examples, `${method} ${path} answer examples`).to.be.an('array').that.is.not.empty;
      expect(ok.examples[0]).to.include({ code: 200, success: true });
    }
  });
});
