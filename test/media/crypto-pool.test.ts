import { createHash, randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { checkEncryptedDigest, checkPlainDigest, encryptMedia, expandMediaKey } from '../../src/infra/crypto/whatsapp-media.js';
import { MediaCryptoPool } from '../../src/media/crypto-pool.js';
import { SharedBufferPool } from '../../src/media/shared-buffer-pool.js';

/** Feeds `enc` to a job in uneven chunks, as a socket would. */
function receive(pool: MediaCryptoPool, enc: Buffer, mediaKey: Buffer, withEncSha = true) {
  const { iv, cipherKey, macKey } = expandMediaKey('video', mediaKey);
  const job = pool.start(enc.length, { iv, cipherKey, macKey, withEncSha });
  for (let at = 0, step = 1; at < enc.length; at += step, step = step * 3 + 7) job.write(enc.subarray(at, Math.min(enc.length, at + step)));
  return job;
}

describe('MediaCryptoPool', () => {
  const pool = new MediaCryptoPool();
  after(() => pool.close());

  it('gives the receive buffer back once the passes are done, for the next download', async () => {
    const mediaKey = randomBytes(32);
    const { enc } = encryptMedia('video', randomBytes(300_000), mediaKey);
    const seen: SharedArrayBuffer[] = [];
    const acquire = SharedBufferPool.prototype.acquire;
    SharedBufferPool.prototype.acquire = function (size) {
      const buffer = acquire.call(this, size);
      seen.push(buffer);
      return buffer;
    };
    try {
      const first = receive(pool, enc, mediaKey);
      first.complete();
      await first.result();
      receive(pool, enc, mediaKey).abort();
      receive(pool, enc, mediaKey).abort();
    } finally {
      SharedBufferPool.prototype.acquire = acquire;
    }
    expect(seen).to.have.length(3);
    expect(seen[1]).to.equal(seen[0]);
    expect(seen[2]).to.equal(seen[0]);
  });

  it('never hands a buffer the workers still read to another download', async () => {
    const mediaKey = randomBytes(32);
    // Large enough that the passes are still reading while the second download arrives.
    const plain = randomBytes(8_000_000);
    const { enc } = encryptMedia('video', plain, mediaKey);
    const first = receive(pool, enc, mediaKey);
    first.complete();
    // Received while the first one's passes run: it lands in other memory, junk and all.
    const junk = Buffer.alloc(enc.length, 0xa5);
    const second = receive(pool, junk, mediaKey);
    second.complete();
    const [one] = await Promise.all([first.result(), second.result()]);
    expect(one?.plain.bytes.equals(plain)).to.equal(true);
  });

  it('answers the digests and the plain bytes of a received file, for files that reuse one buffer', async () => {
    // Largest first: the later, smaller files land in the buffer it leaves, over its old bytes.
    for (const size of [700_000, 300_001, 16, 0]) {
      const plain = randomBytes(size);
      const mediaKey = randomBytes(32);
      const media = encryptMedia('video', plain, mediaKey);
      const job = receive(pool, media.enc, mediaKey);
      job.complete();
      const result = await job.result();
      if (!result) return expect.fail('no result');
      expect(result.plain.bytes.equals(plain), `plain bytes of ${size}`).to.equal(true);
      expect(Buffer.from(result.encrypted.encSha256 ?? []).equals(media.fileEncSha256)).to.equal(true);
      expect(Buffer.from(result.plain.sha256).equals(createHash('sha256').update(plain).digest())).to.equal(true);
      checkEncryptedDigest(result.encrypted, { fileSha256: media.fileSha256, fileEncSha256: media.fileEncSha256 });
      checkPlainDigest(result.plain, { fileSha256: media.fileSha256 });
    }
  });

  it('leaves out the encrypted hash when none is expected, and still checks the MAC', async () => {
    const mediaKey = randomBytes(32);
    const media = encryptMedia('video', randomBytes(500_000), mediaKey);
    const tampered = Buffer.from(media.enc);
    tampered[1000] = (tampered[1000] as number) ^ 1;
    const job = receive(pool, tampered, mediaKey, false);
    job.complete();
    const result = await job.result();
    if (!result) return expect.fail('no result');
    expect(result.encrypted.encSha256).to.equal(undefined);
    expect(() => checkEncryptedDigest(result.encrypted, { fileSha256: media.fileSha256 })).to.throw(/MAC mismatch/);
  });

  it('answers nothing for a download aborted or ended short, and refuses bytes past the announced length', async () => {
    const mediaKey = randomBytes(32);
    const { enc } = encryptMedia('video', randomBytes(400_000), mediaKey);
    const { iv, cipherKey, macKey } = expandMediaKey('video', mediaKey);
    const aborted = pool.start(enc.length, { iv, cipherKey, macKey, withEncSha: true });
    aborted.write(enc.subarray(0, 1000));
    aborted.abort();
    expect(await aborted.result()).to.equal(null);
    expect(() => aborted.write(enc.subarray(1000, 2000))).to.throw();

    const short = pool.start(enc.length, { iv, cipherKey, macKey, withEncSha: true });
    short.write(enc.subarray(0, enc.length - 1));
    short.complete();
    expect(await short.result()).to.equal(null);

    const long = pool.start(enc.length - 1, { iv, cipherKey, macKey, withEncSha: true });
    expect(() => long.write(enc)).to.throw(RangeError);
    long.abort();
  });
});

describe('MediaCryptoPool after close', () => {
  it('starts no job and no worker: a download still receiving fails instead of being verified', async () => {
    const pool = new MediaCryptoPool();
    const mediaKey = randomBytes(32);
    const { enc } = encryptMedia('video', randomBytes(300_000), mediaKey);
    const receiving = receive(pool, enc, mediaKey);
    await pool.close();
    const released: SharedArrayBuffer[] = [];
    const release = SharedBufferPool.prototype.release;
    SharedBufferPool.prototype.release = function (buffer) {
      released.push(buffer);
      release.call(this, buffer);
    };
    try {
      receiving.complete();
      const failed = await receiving.result().then(
        () => null,
        (err: Error) => err,
      );
      expect(failed?.message).to.match(/closed/);
      expect(() => receive(pool, enc, mediaKey)).to.throw(/closed/);
      // Let any settling of the failed passes run: nothing goes back into the closed pool.
      await new Promise((r) => setImmediate(r));
    } finally {
      SharedBufferPool.prototype.release = release;
    }
    expect(released).to.deep.equal([]);
  });
});

describe('SharedBufferPool', () => {
  it('hands a released buffer out again, the smallest that fits, and never one too small', () => {
    const pool = new SharedBufferPool();
    const big = pool.acquire(5_000_000);
    const small = pool.acquire(100);
    expect(big.byteLength).to.be.at.least(5_000_000);
    pool.release(big);
    pool.release(small);
    expect(pool.retainedBytes).to.equal(big.byteLength + small.byteLength);
    expect(pool.acquire(50)).to.equal(small);
    expect(pool.acquire(5_000_000)).to.equal(big);
    expect(pool.acquire(10)).to.not.equal(small);
    expect(pool.retainedBytes).to.equal(0);
    pool.clear();
  });

  it('keeps no more than its budget, and lets everything go once idle', async () => {
    const pool = new SharedBufferPool({ maxRetainedBytes: 3 * 1024 * 1024, idleMs: 20 });
    const buffers = [pool.acquire(2 * 1024 * 1024), pool.acquire(1024 * 1024), pool.acquire(1024 * 1024)];
    for (const b of buffers) pool.release(b);
    expect(pool.retainedBytes).to.equal(3 * 1024 * 1024);
    await new Promise((r) => setTimeout(r, 60));
    expect(pool.retainedBytes).to.equal(0);
  });
});
