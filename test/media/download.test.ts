/* eslint-disable @typescript-eslint/no-explicit-any -- test answers are read field by field */
import { createHash, randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { expectError, newAccount, startTestGateway, type TestAccount, type TestGateway } from '../support/gateway.js';
import { downloadBody, newPhone } from '../support/sandbox.js';
import { fieldsOf, pairedInstance, phoneSends, recorded } from '../support/chats.js';

type Kind = 'image' | 'video' | 'audio' | 'document';

const flip = (b64: string, at = 0) => {
  const bytes = Buffer.from(b64, 'base64');
  bytes[at]! ^= 1;
  return bytes.toString('base64');
};

describe('chat/download{image,video,audio,document} over the sandbox', () => {
  let t: TestGateway;
  let owner: TestAccount;
  let me: { id: string; phone: string; jid: string };
  let sender: { phone: string; jid: string };

  const download = (kind: Kind, body: unknown, id = me.id) => t.api('POST', `/instances/${id}/chat/download${kind}`, { token: owner.jwt, body });

  /** The sender phone sends the bytes; answers the media fields of the Message event the instance recorded. */
  async function received(kind: Kind, plain: Buffer, mimetype: string, to = me): Promise<any> {
    const id = await phoneSends(t, owner, sender.phone, to.phone, { media: { kind, mimetype, data_base64: plain.toString('base64'), file_name: `f.${kind}` } });
    const event = await recorded(t, to.id, 'MessageReceived', (d) => d.message.id === id);
    return event.message.media;
  }

  before(async () => {
    t = await startTestGateway({ MESSAGING_NETWORK: 'sandbox', MEDIA_MAX_BYTES: String(2 * 1024 * 1024) });
    owner = await newAccount(t.api);
    me = await pairedInstance(t, owner);
    sender = await newPhone(t.api, owner);
  });
  after(async () => t.stop());

  const samples: [Kind, string, number][] = [
    ['image', 'image/jpeg', 1],
    ['video', 'video/mp4', 1_000_003],
    ['audio', 'audio/ogg; codecs=opus', 16],
    ['document', 'application/pdf', 70_001],
  ];
  for (const [kind, mimetype, size] of samples) {
    it(`round-trips ${kind} byte for byte (${size} bytes)`, async () => {
      const plain = randomBytes(size);
      const media = await received(kind, plain, mimetype);
      expect(media).to.include({ kind, mimetype, file_length: size });
      const res = await download(kind, downloadBody(media));
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.include({ code: 200, success: true });
      expect(res.body.data.mimetype).to.equal(mimetype);
      const prefix = `data:${mimetype};base64,`;
      expect(res.body.data.data.startsWith(prefix)).to.equal(true);
      expect(Buffer.from(res.body.data.data.slice(prefix.length), 'base64').equals(plain)).to.equal(true);
    });
  }

  it('does without file_enc_sha256 and direct_path (both optional)', async () => {
    const plain = randomBytes(5000);
    const media = await received('image', plain, 'image/png');
    const { file_enc_sha256: _enc, direct_path: _path, ...body } = downloadBody(media);
    const res = await download('image', body);
    expect(res.status, res.text).to.equal(200);
    expect(createHash('sha256').update(Buffer.from(res.body.data.data.split(',')[1], 'base64')).digest('base64')).to.equal(media.file_sha256);
  });

  describe('expired media (the media retry)', () => {
    const fileOf = (url: string) => url.slice(url.lastIndexOf('/') + 1);
    const expire = (url: string, token = owner.jwt) => t.api('DELETE', `/sandbox/media/${fileOf(url)}`, { token });

    it('is asked again from the sender phone, which uploads it under a new URL, and answers the same bytes', async () => {
      const plain = randomBytes(30_000);
      const media = await received('image', plain, 'image/jpeg');
      const expired = await expire(media.url);
      expect(expired.status, expired.text).to.equal(200);
      // The host itself now answers 404, as the network's does for expired media.
      expect((await fetch(media.url)).status).to.equal(404);
      const res = await download('image', downloadBody(media));
      expect(res.status, res.text).to.equal(200);
      expect(Buffer.from(res.body.data.data.split(',')[1], 'base64').equals(plain)).to.equal(true);
      // The old URL stays gone: the bytes came from the re-upload, not from the expired file.
      expect((await fetch(media.url)).status).to.equal(404);
      // A second download of the old link asks again and succeeds again.
      const again = await download('image', downloadBody(media));
      expect(again.status, again.text).to.equal(200);
    });

    it("expiring is the owner's only, and an unknown file is 404", async () => {
      const media = await received('document', randomBytes(1000), 'application/pdf');
      const other = await newAccount(t.api);
      expectError(await expire(media.url, other.jwt), 404, 'not_found');
      expectError(await t.api('DELETE', '/sandbox/media/NOSUCHBLOB.enc', { token: owner.jwt }), 404, 'not_found');
      expectError(await t.api('DELETE', '/sandbox/media/..%2Fx.enc', { token: owner.jwt }), 404, 'not_found');
      expectError(await t.api('DELETE', `/sandbox/media/${fileOf(media.url)}`), 401, 'unauthorized');
      // Refused expiries changed nothing: the file is still served.
      expect((await fetch(media.url)).status).to.equal(200);
    });
  });

  describe('refusals', () => {
    let media: any;
    before(async () => {
      media = await received('document', randomBytes(40_000), 'application/octet-stream');
    });

    it('a tampered media key, or the wrong kind of media (MAC mismatch)', async () => {
      for (const res of [
        await download('document', { ...downloadBody(media), media_key: flip(media.media_key) }),
        await download('document', { ...downloadBody(media), media_key: randomBytes(32).toString('base64') }),
        await download('video', downloadBody(media)),
      ]) {
        expectError(res, 400, 'invalid_input');
        expect(fieldsOf(res)).to.deep.equal(['media_key']);
        expect(res.body.error.message).to.match(/MAC/);
      }
    });

    it('a file_sha256 or file_enc_sha256 that does not match', async () => {
      const plainHash = await download('document', { ...downloadBody(media), file_sha256: flip(media.file_sha256, 31) });
      expectError(plainHash, 400, 'invalid_input');
      expect(fieldsOf(plainHash)).to.deep.equal(['file_sha256']);
      const encHash = await download('document', { ...downloadBody(media), file_enc_sha256: flip(media.file_enc_sha256) });
      expectError(encHash, 400, 'invalid_input');
      expect(fieldsOf(encHash)).to.deep.equal(['file_enc_sha256']);
    });

    it('the same refusals for large media, verified off the event loop once received', async () => {
      const large = await received('video', randomBytes(600_000), 'video/mp4');
      const cases: [Record<string, unknown>, string][] = [
        [{ media_key: flip(large.media_key) }, 'media_key'],
        [{ file_enc_sha256: flip(large.file_enc_sha256, 5) }, 'file_enc_sha256'],
        [{ file_sha256: flip(large.file_sha256, 7) }, 'file_sha256'],
      ];
      for (const [change, field] of cases) {
        const res = await download('video', { ...downloadBody(large), ...change });
        expectError(res, 400, 'invalid_input');
        expect(fieldsOf(res)).to.deep.equal([field]);
      }
      expectError(await download('image', downloadBody(large)), 400, 'invalid_input');
      const ok = await download('video', downloadBody(large));
      expect(ok.status, ok.text).to.equal(200);
    });

    it('a declared size over MEDIA_MAX_BYTES, before fetching anything (413)', async () => {
      const res = await download('document', { ...downloadBody(media), url: 'https://mmg.whatsapp.net/never/fetched', file_length: 2 * 1024 * 1024 + 1 });
      expectError(res, 413, 'payload_too_large');
      expect(fieldsOf(res)).to.deep.equal(['file_length']);
    });

    it('an actual size over MEDIA_MAX_BYTES, whatever the declared one (413)', async () => {
      const big = await received('video', randomBytes(2 * 1024 * 1024 + 100), 'video/mp4');
      const res = await download('video', { ...downloadBody(big), file_length: 10 });
      expectError(res, 413, 'payload_too_large');
    });

    it('hosts that are not the media host: foreign, or another path of the gateway', async () => {
      const origin = new URL(media.url).origin;
      for (const url of ['https://evil.example.com/sandbox/media/x.enc', 'https://mmg.whatsapp.net/v/t62/x.enc', `${origin}/health`, `${origin}/sandbox/phones`, 'ftp://example.com/x']) {
        const res = await download('document', { ...downloadBody(media), url });
        expectError(res, 400, 'invalid_input');
        expect(fieldsOf(res), url).to.deep.equal(['url']);
      }
    });

    it('media the host no longer has, of a message the instance does not know, so no re-upload can be asked (502)', async () => {
      const gone = media.url.replace(/[A-Za-z0-9]+\.enc$/, 'NOSUCHBLOB.enc');
      // A media key no stored message carries: the media retry has no message to ask about.
      const unknownKey = randomBytes(32).toString('base64');
      expectError(await download('document', { ...downloadBody(media), url: gone, media_key: unknownKey }), 502, 'upstream_failed');
    });

    it('bad input, with 400 naming the field', async () => {
      const good = downloadBody(media);
      const without = (field: string) => Object.fromEntries(Object.entries(good).filter(([k]) => k !== field));
      const cases: [unknown, string][] = [
        [without('url'), 'url'],
        [without('media_key'), 'media_key'],
        [without('mimetype'), 'mimetype'],
        [without('file_sha256'), 'file_sha256'],
        [without('file_length'), 'file_length'],
        [{ ...good, url: 'not a url' }, 'url'],
        [{ ...good, media_key: 'not base64!' }, 'media_key'],
        [{ ...good, media_key: Buffer.alloc(31).toString('base64') }, 'media_key'],
        [{ ...good, file_sha256: Buffer.alloc(16).toString('base64') }, 'file_sha256'],
        [{ ...good, file_enc_sha256: 'x' }, 'file_enc_sha256'],
        [{ ...good, file_length: -1 }, 'file_length'],
        [{ ...good, file_length: '12' }, 'file_length'],
        [{ ...good, mimetype: 'text/html,<script>' }, 'mimetype'],
        [{ ...good, mimetype: 'nonsense' }, 'mimetype'],
        [{ ...good, caption: 'x' }, 'caption'],
      ];
      for (const [body, field] of cases) {
        const res = await download('document', body);
        expectError(res, 400, 'invalid_input');
        expect(fieldsOf(res), JSON.stringify(body).slice(0, 120)).to.include(field);
      }
    });

    it("is the owner's only", async () => {
      const other = await newAccount(t.api);
      expectError(await t.api('POST', `/instances/${me.id}/chat/downloaddocument`, { token: other.jwt, body: downloadBody(media) }), 403, 'forbidden');
    });
  });
});

describe('media download without ALLOW_PRIVATE_TARGETS', () => {
  // Issue 13 (f): the sandbox's own media host is the gateway itself, not a tenant's address, so it
  // is fetched over http PUBLIC_URL; any other loopback address is still refused.
  it('fetches the sandbox media host on a loopback http address, and no other loopback address', async () => {
    const t = await startTestGateway({ MESSAGING_NETWORK: 'sandbox', ALLOW_PRIVATE_TARGETS: 'false' });
    try {
      const owner = await newAccount(t.api);
      const me = await pairedInstance(t, owner);
      const sender = await newPhone(t.api, owner);
      const id = await phoneSends(t, owner, sender.phone, me.phone, { media: { kind: 'image', mimetype: 'image/png', data_base64: 'AAAA' } });
      const media = (await recorded(t, me.id, 'MessageReceived', (d) => d.message.id === id)).message.media;
      const own = await t.api('POST', `/instances/${me.id}/chat/downloadimage`, { token: owner.jwt, body: downloadBody(media) });
      expect(own.status, own.text).to.equal(200);
      const other = new URL(media.url);
      other.port = String(Number(other.port) + 1);
      const res = await t.api('POST', `/instances/${me.id}/chat/downloadimage`, { token: owner.jwt, body: { ...downloadBody(media), url: other.href } });
      expectError(res, 400, 'invalid_input');
      expect(fieldsOf(res)).to.deep.equal(['url']);
    } finally {
      await t.stop();
    }
  });
});
