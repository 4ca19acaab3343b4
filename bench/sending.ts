import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import sharp from 'sharp';
import { encryptMedia } from '../src/infra/crypto/whatsapp-media.js';
import { startChild } from './child.js';
import { report } from './lib.js';

/**
 * Media sends through the API on the sandbox: a 1 MB image fetched from a URL, judged by its
 * bytes, encrypted and stored by the sandbox's media host, delivered to the phone. Baseline: the
 * same bytes encrypted (AES-256-CBC, HMAC, both hashes) in a loop in this process, the one step
 * no send can skip. Then the gateway's resident memory over one 60 MB video send, against the
 * file's size: the file is streamed to disk and read from there, never held whole three times.
 */
const GATEWAY = 'dist/main.js';
const SENDS = Number(process.env.BENCH_SEND_MEDIA ?? 40);
const CONCURRENCY = 4;
const VIDEO_BYTES = 60 * 1024 * 1024;

// A CDN edge on its own thread: serves each named buffer.
const HOST = `
const { createServer } = require('node:http');
const { parentPort, workerData } = require('node:worker_threads');
const files = Object.fromEntries(Object.entries(workerData).map(([k, v]) => [k, Buffer.from(v)]));
const server = createServer((req, res) => {
  const body = files[req.url.slice(1)];
  if (!body) return res.writeHead(404).end();
  res.writeHead(200, { 'content-length': body.length });
  res.end(body);
});
server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
parentPort.on('message', () => server.close(() => process.exit(0)));
`;

const shared = (b: Buffer) => {
  const s = new SharedArrayBuffer(b.length);
  Buffer.from(s).set(b);
  return s;
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are read field by field
async function json(origin: string, method: string, path: string, token: string | undefined, body?: unknown): Promise<any> {
  const res = await fetch(origin + path, { method, headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

export async function benchSending(): Promise<void> {
  // Noise compresses badly: a JPEG of about 1 MB.
  const image = await sharp(randomBytes(900 * 900 * 3), { raw: { width: 900, height: 900, channels: 3 } }).jpeg({ quality: 95 }).toBuffer();
  // An MP4 by its header (ftyp box), then filler: what the gateway reads of it is the kind.
  const ftyp = Buffer.from('000000186674797069736f6d0000020069736f6d6d703432', 'hex');
  const video = Buffer.concat([ftyp, randomBytes(VIDEO_BYTES - ftyp.length)]);
  const host = new Worker(HOST, { eval: true, workerData: { 'image.jpg': shared(image), 'video.mp4': shared(video) } });
  const [port] = (await once(host, 'message')) as [number];
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-send-'));
  const gateway = await startChild(GATEWAY, { DATA_DIR: dataDir, LOG_LEVEL: 'warn', MESSAGING_NETWORK: 'sandbox', ALLOW_PRIVATE_TARGETS: 'true' });
  try {
    const o = gateway.origin;
    const email = `bench-${Date.now()}@example.com`;
    await json(o, 'POST', '/auth/signup', undefined, { email, password: 'a long password' });
    const { access_token: jwt } = await json(o, 'POST', '/auth/login', undefined, { email, password: 'a long password' });
    const { id } = await json(o, 'PUT', '/instances/create', jwt, { name: 'bench' });
    const me = '5511970000001';
    const them = '5511970000002';
    for (const phone of [me, them]) await json(o, 'POST', '/sandbox/phones', jwt, { phone, push_name: phone });
    const { data } = await json(o, 'GET', `/instances/${id}/session/qr`, jwt);
    await json(o, 'POST', `/sandbox/phones/${me}/scan`, jwt, { qr: data.qr });
    for (let i = 0; ; i++) {
      if ((await json(o, 'GET', `/instances/${id}/session/status`, jwt)).data.connected) break;
      if (i > 200) throw new Error('not connected');
      await new Promise((r) => setTimeout(r, 50));
    }
    const sendImage = () => json(o, 'POST', `/instances/${id}/chat/send/image`, jwt, { phone: them, media: { url: `http://127.0.0.1:${port}/image.jpg` } });
    for (let i = 0; i < 3; i++) await sendImage();

    let left = SENDS;
    const t0 = performance.now();
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      while (left-- > 0) await sendImage();
    }));
    const sendsPerS = SENDS / ((performance.now() - t0) / 1000);

    const key = randomBytes(32);
    const loops = Math.max(20, SENDS);
    const t1 = performance.now();
    for (let i = 0; i < loops; i++) encryptMedia('image', image, key);
    const encryptsPerS = loops / ((performance.now() - t1) / 1000);
    report({
      name: `media sends through the API (${(image.length / 1e6).toFixed(2)} MB image from a URL, sandbox)`,
      value: sendsPerS,
      unit: 'sends/s',
      baseline: { name: 'encrypting the same bytes in a loop', value: encryptsPerS },
      target: '>= 0.5x',
      met: sendsPerS / encryptsPerS >= 0.5,
    });

    const before = gateway.rssBytes() ?? 0;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, gateway.rssBytes() ?? 0)), 10);
    await json(o, 'POST', `/instances/${id}/chat/send/video`, jwt, { phone: them, media: { url: `http://127.0.0.1:${port}/video.mp4` } });
    clearInterval(sampler);
    peak = Math.max(peak, gateway.rssBytes() ?? 0);
    const grew = peak - before;
    report({
      name: 'memory of one 60 MB video send (resident growth)',
      value: grew / 1e6,
      unit: 'MB',
      baseline: { name: 'the file', value: VIDEO_BYTES / 1e6 },
      target: '< 2x',
      met: grew < 2 * VIDEO_BYTES,
    });
  } finally {
    await gateway.stop();
    host.postMessage('stop');
    await rm(dataDir, { recursive: true, force: true });
  }
}
