import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { MediaEncryptPool } from '../../src/infra/crypto/media-encrypt-pool.js';
import { decryptMedia, encryptMedia } from '../../src/infra/crypto/whatsapp-media.js';

const failure = (p: Promise<unknown>) => p.then(() => expect.fail('should have failed'), (err: Error) => err.message);

describe('MediaEncryptPool', () => {
  const pool = new MediaEncryptPool(2);
  let dir: string;
  before(async () => (dir = await mkdtemp(join(tmpdir(), 'gw-encpool-'))));
  after(async () => {
    await pool.close();
    await rm(dir, { recursive: true, force: true });
  });

  const file = async (name: string, bytes: Buffer) => {
    const path = join(dir, name);
    await writeFile(path, bytes);
    return path;
  };

  // Sizes around the piece (64 KiB): shorter, exactly one, one and a bit, exactly three, and empty.
  for (const size of [1000, 65_536, 65_537, 3 * 65_536, 0]) {
    it(`encrypts a ${size}-byte file in pieces into the bytes and hashes of the whole-buffer form`, async () => {
      const plain = randomBytes(size);
      const key = randomBytes(32);
      const pieces: Buffer[] = [];
      const digest = await pool.encryptFile('video', key, await file(`f${size}`, plain), 65_536, async (p) => {
        pieces.push(p.data);
      });
      const whole = encryptMedia('video', plain, key);
      const enc = Buffer.concat(pieces);
      expect(enc.equals(whole.enc)).to.equal(true);
      expect(digest.fileSha256.equals(whole.fileSha256)).to.equal(true);
      expect(digest.fileEncSha256.equals(whole.fileEncSha256)).to.equal(true);
      expect(digest.fileLength).to.equal(size);
      expect(digest.encLength).to.equal(enc.length);
      expect(decryptMedia('video', enc, key, { fileSha256: whole.fileSha256, fileEncSha256: whole.fileEncSha256 }).equals(plain)).to.equal(true);
      // Every piece but the last is exactly a piece long.
      for (const p of pieces.slice(0, -1)) expect(p.length).to.equal(65_536);
    });
  }

  it('runs files side by side, each with its own key', async () => {
    const inputs = await Promise.all([0, 1, 2, 3].map(async (i) => ({ plain: randomBytes(200_000 + i), key: randomBytes(32), path: await file(`p${i}`, randomBytes(0)) })));
    await Promise.all(inputs.map((x) => writeFile(x.path, x.plain)));
    const results = await Promise.all(
      inputs.map(async (x) => {
        const pieces: Buffer[] = [];
        await pool.encryptFile('image', x.key, x.path, 16 * 1024, async (p) => {
          pieces.push(p.data);
          await new Promise((r) => setImmediate(r));
        });
        return Buffer.concat(pieces);
      }),
    );
    inputs.forEach((x, i) => expect(results[i]?.equals(encryptMedia('image', x.plain, x.key).enc)).to.equal(true));
  });

  it('stops when storing a piece fails and goes on serving other files', async () => {
    const path = await file('fails', randomBytes(300_000));
    let stored = 0;
    const failing = pool.encryptFile('document', randomBytes(32), path, 65_536, async () => {
      if (++stored === 2) throw new Error('the store is down');
    });
    expect(await failure(failing)).to.equal('the store is down');
    expect(stored).to.equal(2);
    const plain = randomBytes(5000);
    const key = randomBytes(32);
    const pieces: Buffer[] = [];
    await pool.encryptFile('document', key, await file('after', plain), 65_536, async (p) => void pieces.push(p.data));
    expect(Buffer.concat(pieces).equals(encryptMedia('document', plain, key).enc)).to.equal(true);
  });

  it('refuses a missing file with the error, and a key of the wrong length', async () => {
    expect(await failure(pool.encryptFile('image', randomBytes(32), join(dir, 'missing'), 65_536, async () => undefined))).to.match(/ENOENT/);
    expect(await failure(pool.encryptFile('image', randomBytes(31), join(dir, 'f1000'), 65_536, async () => undefined))).to.match(/32 bytes/);
    expect(await readdir(dir)).to.include('f1000');
  });
});
