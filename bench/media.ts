import { createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { MAC_LENGTH, encryptMedia, expandMediaKey } from '../src/infra/crypto/whatsapp-media.js';
import { MediaDownloader } from '../src/media/media-downloader.js';
import type { MediaRequest } from '../src/media/media-request.js';
import { MediaSource } from '../src/media/media-source.js';
import { median, report } from './lib.js';

/**
 * Media download throughput for a 20 MB video: fetch over HTTP, verify the MAC and both hashes,
 * decrypt. The baseline is a plain AES-256-CBC decrypt of the same ciphertext in this process:
 * the one step no download can skip. The media host runs on a worker thread, so serving the
 * bytes does not share the downloader's event loop.
 */
const SIZE = 20 * 1024 * 1024;
const RUNS = Number(process.env.BENCH_MEDIA_RUNS ?? 15);
const TARGET = 0.5;

// Plain JavaScript: the worker serves one buffer over HTTP, like a CDN edge.
const HOST = `
const { createServer } = require('node:http');
const { parentPort, workerData } = require('node:worker_threads');
const body = Buffer.from(workerData);
const server = createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length });
  res.end(body);
});
server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
parentPort.on('message', () => server.close(() => process.exit(0)));
`;

export async function benchMedia(): Promise<void> {
  const plain = randomBytes(SIZE);
  const mediaKey = randomBytes(32);
  const { enc, fileSha256, fileEncSha256 } = encryptMedia('video', plain, mediaKey);
  const shared = new SharedArrayBuffer(enc.length);
  Buffer.from(shared).set(enc);
  const host = new Worker(HOST, { eval: true, workerData: shared });
  const [port] = (await once(host, 'message')) as [number];
  const source = new MediaSource({ allowedHost: () => true, allowPrivate: true });
  const downloader = new MediaDownloader(source, 64 * 1024 * 1024);
  const request: MediaRequest = {
    kind: 'video',
    url: new URL(`http://127.0.0.1:${port}/video.enc`),
    mediaKey,
    mimetype: 'video/mp4',
    fileSha256,
    fileEncSha256,
    fileLength: plain.length,
  };
  try {
    const { iv, cipherKey, macKey } = expandMediaKey('video', mediaKey);
    const ciphertext = enc.subarray(0, enc.length - MAC_LENGTH);
    const decryptOnly = () => {
      const decipher = createDecipheriv('aes-256-cbc', cipherKey, iv);
      return Buffer.concat([decipher.update(ciphertext), decipher.final()]);
    };
    // Warm-up, and a check that the download is the real thing.
    if (!decryptOnly().equals(plain) || !(await downloader.download(request)).equals(plain)) throw new Error('media bench: round trip failed');
    await downloader.download(request);

    const baseline: number[] = [];
    const downloads: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      let t0 = performance.now();
      decryptOnly();
      baseline.push(performance.now() - t0);
      t0 = performance.now();
      await downloader.download(request);
      downloads.push(performance.now() - t0);
    }
    // The passes no verified download can skip, timed alone: the MAC (HMAC-SHA256) and the two
    // SHA-256 hashes, with the decrypt as timed above. Spread perfectly over every core, they
    // bound the download.
    const pass = (work: () => unknown) => {
      const times: number[] = [];
      for (let i = 0; i < 5; i++) {
        const t0 = performance.now();
        work();
        times.push(performance.now() - t0);
      }
      return median(times);
    };
    const baselineMs = median(baseline);
    const required = [
      pass(() => createHmac('sha256', macKey).update(iv).update(ciphertext).digest()),
      pass(() => createHash('sha256').update(enc).digest()),
      pass(() => createHash('sha256').update(plain).digest()),
      baselineMs,
    ];
    const cores = availableParallelism();
    const boundMs = Math.max(required.reduce((a, b) => a + b, 0) / cores, ...required);
    const mbps = (ms: number) => SIZE / 1024 / 1024 / (ms / 1000);
    const base = mbps(baselineMs);
    const got = mbps(median(downloads));
    report({ name: 'media AES-256-CBC decrypt of 20 MB (baseline)', value: base, unit: 'MB/s' });
    report({
      name: `media bound: MAC + 2 x SHA-256 + decrypt spread over ${cores} cores, no I/O (the best any verified download can do here)`,
      value: mbps(boundMs),
      unit: 'MB/s',
      baseline: { name: 'AES-CBC decrypt', value: base },
    });
    report({
      name: 'media download 20 MB video: fetch + MAC + enc hash + decrypt + plain hash',
      value: got,
      unit: 'MB/s',
      baseline: { name: 'AES-CBC decrypt', value: base },
      target: `>= ${TARGET}x`,
      met: got >= TARGET * base,
    });
  } finally {
    await downloader.close();
    await source.close();
    host.postMessage('stop');
    await once(host, 'exit');
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchMedia();
