import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { MAC_LENGTH, MEDIA_INFO, MEDIA_KEY_LENGTH, type MediaKind } from './whatsapp-media.js';

/**
 * The workers' code, plain JavaScript evaluated as-is (it needs nothing but node's own modules,
 * and an inline source loads the same under tsx, in tests and from dist). A job is one file: the
 * worker opens it, and each `next` reads one piece, encrypts it (AES-256-CBC, the HMAC and both
 * SHA-256 chains run over it in the same pass) and hands the ciphertext over (transferred, not
 * copied). The last piece carries the final block and the 10-byte MAC.
 */
const SOURCE = `
const { closeSync, fstatSync, openSync, readSync } = require('node:fs');
const { createCipheriv, createHash, createHmac, hkdfSync } = require('node:crypto');
const { parentPort } = require('node:worker_threads');
const INFO = ${JSON.stringify(MEDIA_INFO)};
const jobs = new Map();

function start(m) {
  const expanded = Buffer.from(hkdfSync('sha256', Buffer.from(m.mediaKey), Buffer.alloc(0), INFO[m.kind], 112));
  const iv = expanded.subarray(0, 16);
  const fd = openSync(m.path, 'r');
  const job = {
    fd,
    size: fstatSync(fd).size,
    at: 0,
    piece: m.piece,
    buffer: Buffer.allocUnsafe(m.piece),
    cipher: createCipheriv('aes-256-cbc', expanded.subarray(16, 48), iv),
    mac: createHmac('sha256', expanded.subarray(48, 80)).update(iv),
    encHash: createHash('sha256'),
    plainHash: createHash('sha256'),
  };
  jobs.set(m.id, job);
  return {};
}

function next(m) {
  const job = jobs.get(m.id);
  if (!job) throw new Error('no such job');
  const want = Math.min(job.piece, job.size - job.at);
  let got = 0;
  while (got < want) {
    const n = readSync(job.fd, job.buffer, got, want - got, job.at + got);
    if (n === 0) break;
    got += n;
  }
  job.at += got;
  const plain = job.buffer.subarray(0, got);
  job.plainHash.update(plain);
  let out = job.cipher.update(plain);
  job.mac.update(out);
  const last = got < job.piece || job.at >= job.size;
  const answer = {};
  if (last) {
    const tail = job.cipher.final();
    job.mac.update(tail);
    out = Buffer.concat([out, tail, job.mac.digest().subarray(0, ${MAC_LENGTH})]);
    end(m.id);
    Object.assign(answer, { last: true, fileLength: job.at, fileSha256: job.plainHash.digest() });
  }
  job.encHash.update(out);
  if (last) answer.fileEncSha256 = job.encHash.digest();
  // Handed over, not copied: a piece with a buffer of its own is transferred whole.
  const own = out.byteOffset === 0 && out.length === out.buffer.byteLength;
  answer.data = own ? out.buffer : out.buffer.slice(out.byteOffset, out.byteOffset + out.length);
  answer.transfer = [answer.data];
  return answer;
}

function end(id) {
  const job = jobs.get(id);
  if (!job) return {};
  jobs.delete(id);
  closeSync(job.fd);
  return {};
}

const ops = { start, next, end };
parentPort.on('message', (m) => {
  try {
    const { transfer, ...answer } = ops[m.op](m);
    parentPort.postMessage({ id: m.id, seq: m.seq, ...answer }, transfer || []);
  } catch (err) {
    if (m.op !== 'end') { try { end(m.id); } catch {} }
    parentPort.postMessage({ id: m.id, seq: m.seq, error: String((err && err.message) || err) });
  }
});
`;

/** One piece of a file, encrypted (the last also holds the MAC). */
export interface EncryptedPiece {
  data: Buffer;
}

/** What the whole file came to, known once its last piece is encrypted. */
export interface EncryptedFileDigest {
  fileSha256: Buffer;
  fileEncSha256: Buffer;
  /** Plain bytes read. */
  fileLength: number;
  /** Bytes encrypted, MAC included. */
  encLength: number;
}

interface Answer {
  id: number;
  seq: number;
  error?: string;
  data?: ArrayBuffer;
  last?: boolean;
  fileLength?: number;
  fileSha256?: Uint8Array;
  fileEncSha256?: Uint8Array;
}

interface Slot {
  worker: Worker;
  jobs: number;
}

/**
 * Encrypts files for upload off the event loop (the sandbox's media host; WhatsApp's scheme, as
 * `encryptMedia`). A file is read and encrypted a piece at a time by one worker, which reads the
 * next piece while the caller stores the last, so a 60 MB video is never held whole and the event
 * loop does no reading, hashing or ciphering. Jobs spread over a few workers (the files of
 * concurrent sends go side by side); workers start on first use, are unref'd and are replaced if
 * one dies.
 */
export class MediaEncryptPool {
  private readonly slots: Slot[] = [];
  private readonly pending = new Map<string, { slot: Slot; resolve(a: Answer): void; reject(e: Error): void }>();
  private nextId = 1;
  private closed = false;

  constructor(private readonly size = Math.max(1, Math.min(4, availableParallelism()))) {}

  /**
   * Encrypts the file at `path` in pieces of `pieceBytes` (a multiple of 16), handing each to
   * `store` in order; the next piece is being encrypted while `store` runs. Answers the digests.
   */
  async encryptFile(kind: MediaKind, mediaKey: Uint8Array, path: string, pieceBytes: number, store: (piece: EncryptedPiece) => Promise<void>): Promise<EncryptedFileDigest> {
    if (mediaKey.length !== MEDIA_KEY_LENGTH) throw new RangeError(`media key must be ${MEDIA_KEY_LENGTH} bytes`);
    if (pieceBytes <= 0 || pieceBytes % 16 !== 0) throw new RangeError('pieces must be a positive multiple of 16 bytes');
    const slot = this.pick();
    const id = this.nextId++;
    slot.jobs++;
    let seq = 0;
    const call = (message: Record<string, unknown>) => this.call(slot, id, seq++, message);
    let finished = false;
    try {
      await call({ op: 'start', kind, mediaKey: new Uint8Array(mediaKey), path, piece: pieceBytes });
      let encLength = 0;
      let ahead = call({ op: 'next' });
      for (;;) {
        const piece = await ahead;
        if (piece.last) finished = true;
        else ahead = call({ op: 'next' });
        const data = piece.data ? Buffer.from(piece.data) : Buffer.alloc(0);
        encLength += data.length;
        try {
          await store({ data });
        } catch (err) {
          // The piece read meanwhile is dropped with the job.
          if (!piece.last) await ahead.catch(() => undefined);
          throw err;
        }
        if (piece.last) {
          return {
            fileSha256: Buffer.from(piece.fileSha256 ?? []),
            fileEncSha256: Buffer.from(piece.fileEncSha256 ?? []),
            fileLength: piece.fileLength ?? 0,
            encLength,
          };
        }
      }
    } finally {
      slot.jobs--;
      // The worker closes a finished or failed job itself; one given up on is closed here.
      if (!finished) await call({ op: 'end' }).catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const slots = this.slots.splice(0);
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }

  private call(slot: Slot, id: number, seq: number, message: Record<string, unknown>): Promise<Answer> {
    if (!this.slots.includes(slot)) return Promise.reject(new Error('the media encryption worker is gone'));
    return new Promise<Answer>((resolve, reject) => {
      this.pending.set(`${id}:${seq}`, { slot, resolve, reject });
      slot.worker.postMessage({ ...message, id, seq });
    });
  }

  /** The worker with the fewest files, starting one while fewer than `size` run. */
  private pick(): Slot {
    if (this.closed) throw new Error('the media encryption pool is closed');
    const idle = this.slots.find((s) => s.jobs === 0);
    if (idle) return idle;
    if (this.slots.length < this.size) return this.spawn();
    return this.slots.reduce((a, b) => (b.jobs < a.jobs ? b : a));
  }

  private spawn(): Slot {
    const worker = new Worker(SOURCE, { eval: true });
    worker.unref();
    const slot: Slot = { worker, jobs: 0 };
    worker.on('message', (a: Answer) => {
      const key = `${a.id}:${a.seq}`;
      const call = this.pending.get(key);
      if (!call) return;
      this.pending.delete(key);
      if (a.error !== undefined) call.reject(new Error(`media encryption worker: ${a.error}`));
      else call.resolve(a);
    });
    const fail = (err: Error) => {
      const at = this.slots.indexOf(slot);
      if (at >= 0) this.slots.splice(at, 1);
      for (const [key, call] of this.pending) {
        if (call.slot !== slot) continue;
        this.pending.delete(key);
        call.reject(err);
      }
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`media encryption worker exited with ${code}`)));
    this.slots.push(slot);
    return slot;
  }
}
