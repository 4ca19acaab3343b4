import { createCipheriv, createHash, createHmac } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { encryptedStream, getMediaKeys } from '@whiskeysockets/baileys';
import { expect } from 'chai';
import {
  MEDIA_INFO,
  MediaDecryptor,
  MediaIntegrityError,
  createMediaDecryptor,
  decryptMedia,
  encryptMedia,
  expandMediaKey,
  type MediaKind,
} from '../../../src/infra/crypto/whatsapp-media.js';

const KINDS: MediaKind[] = ['image', 'video', 'audio', 'document'];
const mediaKey = Buffer.from(Array.from({ length: 32 }, (_, i) => i));
const plain = Buffer.from('The quick brown fox jumps over the lazy dog, 48+ bytes long.');

/** RFC 5869 by hand: extract with a zero salt of HashLen bytes, then expand block by block. */
function hkdfByHand(ikm: Buffer, info: string, length: number): Buffer {
  const prk = createHmac('sha256', Buffer.alloc(32)).update(ikm).digest();
  const blocks: Buffer[] = [];
  let previous = Buffer.alloc(0);
  for (let i = 1; Buffer.concat(blocks).length < length; i++) {
    previous = createHmac('sha256', prk).update(Buffer.concat([previous, Buffer.from(info), Buffer.from([i])])).digest();
    blocks.push(previous);
  }
  return Buffer.concat(blocks).subarray(0, length);
}

/** AES-256-CBC with the PKCS#7 padding written out, then the truncated HMAC. */
function encryptByHand(kind: MediaKind, data: Buffer, key: Buffer) {
  const expanded = hkdfByHand(key, MEDIA_INFO[kind], 112);
  const iv = expanded.subarray(0, 16);
  const cipherKey = expanded.subarray(16, 48);
  const macKey = expanded.subarray(48, 80);
  const pad = 16 - (data.length % 16);
  const padded = Buffer.concat([data, Buffer.alloc(pad, pad)]);
  const cipher = createCipheriv('aes-256-cbc', cipherKey, iv).setAutoPadding(false);
  const ciphertext = Buffer.concat([cipher.update(padded), cipher.final()]);
  const mac = createHmac('sha256', macKey).update(Buffer.concat([iv, ciphertext])).digest().subarray(0, 10);
  return { expanded, enc: Buffer.concat([ciphertext, mac]) };
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest();

function expectIntegrity(fn: () => unknown, reason: string) {
  try {
    fn();
  } catch (error) {
    expect(error).to.be.instanceOf(MediaIntegrityError);
    expect((error as MediaIntegrityError).reason).to.equal(reason);
    return;
  }
  expect.fail(`expected MediaIntegrityError(${reason})`);
}

async function streamDecrypt(kind: MediaKind, enc: Buffer, key: Buffer, expected: { fileSha256: Buffer; fileEncSha256?: Buffer }, chunk = 7) {
  const parts: Buffer[] = [];
  for (let i = 0; i < enc.length; i += chunk) parts.push(enc.subarray(i, i + chunk));
  const out: Buffer[] = [];
  await pipeline(Readable.from(parts), createMediaDecryptor(kind, key, expected), async (source: AsyncIterable<Buffer>) => {
    for await (const b of source) out.push(b);
  });
  return Buffer.concat(out);
}

describe('WhatsApp media encryption', () => {
  for (const kind of KINDS) {
    it(`matches a step-by-step computation for ${kind}`, () => {
      const byHand = encryptByHand(kind, plain, mediaKey);
      const keys = expandMediaKey(kind, mediaKey);
      expect(Buffer.concat([keys.iv, keys.cipherKey, keys.macKey, keys.refKey]).equals(byHand.expanded)).to.equal(true);
      const result = encryptMedia(kind, plain, mediaKey);
      expect(result.enc.toString('hex')).to.equal(byHand.enc.toString('hex'));
      expect(result.fileSha256.equals(sha256(plain))).to.equal(true);
      expect(result.fileEncSha256.equals(sha256(byHand.enc))).to.equal(true);
      expect(decryptMedia(kind, result.enc, mediaKey, result).equals(plain)).to.equal(true);
    });
  }

  it('uses a different key per media type', () => {
    const encs = new Set(KINDS.map((k) => encryptMedia(k, plain, mediaKey).enc.toString('hex')));
    expect(encs.size).to.equal(4);
  });

  it('agrees with Baileys: the same keys, and it decrypts what Baileys encrypts', async () => {
    const keys = await getMediaKeys(mediaKey, 'video');
    const ours = expandMediaKey('video', mediaKey);
    expect(Buffer.from(keys.iv!).equals(ours.iv)).to.equal(true);
    expect(Buffer.from(keys.cipherKey!).equals(ours.cipherKey)).to.equal(true);
    expect(Buffer.from(keys.macKey!).equals(ours.macKey)).to.equal(true);
    const data = Buffer.alloc(100_003, 0x5a);
    const theirs = await encryptedStream(data, 'document');
    try {
      const enc = await readFile(theirs.encFilePath);
      const out = decryptMedia('document', enc, theirs.mediaKey, { fileSha256: theirs.fileSha256, fileEncSha256: theirs.fileEncSha256 });
      expect(out.equals(data)).to.equal(true);
    } finally {
      await rm(theirs.encFilePath, { force: true });
    }
  });

  it('encrypts empty media to one padding block', () => {
    const result = encryptMedia('image', Buffer.alloc(0), mediaKey);
    expect(result.enc.length).to.equal(26);
    expect(decryptMedia('image', result.enc, mediaKey, result).length).to.equal(0);
  });

  describe('refusals', () => {
    const good = encryptMedia('image', plain, mediaKey);

    it('a tampered MAC, before decrypting', () => {
      const enc = Buffer.from(good.enc);
      enc[enc.length - 1]! ^= 1;
      expectIntegrity(() => decryptMedia('image', enc, mediaKey, good), 'mac');
    });

    it('a tampered ciphertext (the MAC no longer matches)', () => {
      const enc = Buffer.from(good.enc);
      enc[3]! ^= 1;
      expectIntegrity(() => decryptMedia('image', enc, mediaKey, { fileSha256: good.fileSha256 }), 'mac');
    });

    it('the wrong media type or key', () => {
      expectIntegrity(() => decryptMedia('video', good.enc, mediaKey, good), 'mac');
      expectIntegrity(() => decryptMedia('image', good.enc, Buffer.alloc(32, 1), good), 'mac');
    });

    it('an encrypted hash that does not match', () => {
      const wrong = Buffer.from(good.fileEncSha256);
      wrong[0]! ^= 1;
      expectIntegrity(() => decryptMedia('image', good.enc, mediaKey, { fileSha256: good.fileSha256, fileEncSha256: wrong }), 'file_enc_sha256');
    });

    it('a plain hash that does not match', () => {
      const wrong = Buffer.from(good.fileSha256);
      wrong[31]! ^= 1;
      expectIntegrity(() => decryptMedia('image', good.enc, mediaKey, { fileSha256: wrong, fileEncSha256: good.fileEncSha256 }), 'file_sha256');
    });

    it('truncated input', () => {
      expectIntegrity(() => decryptMedia('image', good.enc.subarray(0, 20), mediaKey, good), 'mac');
      expectIntegrity(() => decryptMedia('image', good.enc.subarray(0, good.enc.length - 1), mediaKey, good), 'mac');
    });

    it('a media key of the wrong length', () => {
      expect(() => decryptMedia('image', good.enc, Buffer.alloc(31), good)).to.throw(RangeError);
    });
  });

  describe('streaming', () => {
    const big = Buffer.from(Array.from({ length: 70_001 }, (_, i) => (i * 31) % 251));
    const good = encryptMedia('audio', big, mediaKey);

    for (const chunk of [1, 7, 10, 16, 4096, 200_000]) {
      it(`decrypts in chunks of ${chunk}`, async () => {
        expect((await streamDecrypt('audio', good.enc, mediaKey, good, chunk)).equals(big)).to.equal(true);
      });
    }

    it('fails the stream on a tampered MAC, enc hash or plain hash', async () => {
      const enc = Buffer.from(good.enc);
      enc[enc.length - 5]! ^= 1;
      const cases: [Buffer, { fileSha256: Buffer; fileEncSha256?: Buffer }, string][] = [
        [enc, good, 'mac'],
        [good.enc, { fileSha256: good.fileSha256, fileEncSha256: sha256(Buffer.from('x')) }, 'file_enc_sha256'],
        [good.enc, { fileSha256: sha256(Buffer.from('x')) }, 'file_sha256'],
      ];
      for (const [input, expected, reason] of cases) {
        const error = await streamDecrypt('audio', input, mediaKey, expected, 1000).then(
          () => null,
          (e: unknown) => e,
        );
        expect(error, reason).to.be.instanceOf(MediaIntegrityError);
        expect((error as MediaIntegrityError).reason).to.equal(reason);
      }
    });

    it('the incremental object holds the MAC back and counts bytes', () => {
      const d = new MediaDecryptor('audio', mediaKey, good);
      const out = [d.update(good.enc.subarray(0, 100)), d.update(good.enc.subarray(100)), d.final()];
      expect(Buffer.concat(out).equals(big)).to.equal(true);
      expect(d.bytesIn).to.equal(good.enc.length);
      expect(() => d.final()).to.throw(/finished/);
    });
  });
});
