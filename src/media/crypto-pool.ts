import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { MAC_LENGTH, type EncryptedDigest, type PlainDigest } from '../infra/crypto/whatsapp-media.js';

/**
 * The workers' code, plain JavaScript evaluated as-is: it needs nothing but node:crypto, and an
 * inline source loads the same under tsx, in tests and from dist, where a file path would not.
 *
 * A job follows a download while it arrives. The bytes land in a shared buffer whose size is the
 * announced length; a small shared control block says how many have landed (FILLED), whether
 * the download ended (STATE: 1 complete, 2 aborted) and bumps SEQ on every change, which the
 * worker waits on without blocking its other jobs. Two kinds of job read the same bytes:
 * - enc: HMAC-SHA256(macKey, iv + ciphertext), SHA-256 of every byte, and the 10-byte tail;
 * - plain: AES-256-CBC decrypt into a second shared buffer, PKCS#7 check, SHA-256 of the result.
 */
const SOURCE = `
const { createDecipheriv, createHash, createHmac } = require('node:crypto');
const { parentPort } = require('node:worker_threads');
const TAIL = ${MAC_LENGTH};
const FILLED = 0, STATE = 1, SEQ = 2;
const WAIT_MS = 120000;

// Takes bytes as they land until the download ends; true when all of them arrived and were taken.
// STATE is read before FILLED: every write precedes the completion, so a completed download's
// FILLED is final when read after it.
async function follow(ctl, total, goal, take) {
  let done = 0;
  for (;;) {
    const seq = Atomics.load(ctl, SEQ);
    const state = Atomics.load(ctl, STATE);
    const filled = Math.min(Atomics.load(ctl, FILLED), total);
    if (filled > done) done = take(done, filled);
    if (state === 2) return false;
    if (state === 1) return filled === total && done >= goal;
    const w = Atomics.waitAsync(ctl, SEQ, seq, WAIT_MS);
    if (w.async && (await w.value) === 'timed-out') return false;
  }
}

async function enc(m) {
  const data = Buffer.from(m.sab, 0, m.total);
  const hmac = createHmac('sha256', Buffer.from(m.macKey)).update(Buffer.from(m.iv));
  const sha = m.withSha ? createHash('sha256') : null;
  const macEnd = Math.max(0, m.total - TAIL);
  const ok = await follow(m.ctl, m.total, m.total, (from, to) => {
    if (sha) sha.update(data.subarray(from, to));
    if (from < macEnd) hmac.update(data.subarray(from, Math.min(to, macEnd)));
    return to;
  });
  if (!ok) return { aborted: true };
  return { mac: hmac.digest().subarray(0, TAIL), tail: Buffer.from(data.subarray(macEnd)), encSha256: sha ? sha.digest() : undefined, length: m.total };
}

async function plain(m) {
  const data = Buffer.from(m.sab, 0, m.total);
  const out = Buffer.from(m.out);
  const cipherEnd = Math.max(0, m.total - TAIL);
  const decipher = createDecipheriv('aes-256-cbc', Buffer.from(m.cipherKey), Buffer.from(m.iv)).setAutoPadding(false);
  let written = 0;
  const ok = await follow(m.ctl, m.total, cipherEnd, (from, to) => {
    // Whole blocks of ciphertext only; the rest waits for more bytes.
    const end = Math.min(cipherEnd, to) - (Math.min(cipherEnd, to) % 16);
    if (end <= from) return from;
    written += decipher.update(data.subarray(from, end)).copy(out, written);
    return end;
  });
  if (!ok) return { aborted: true };
  written += decipher.final().copy(out, written);
  const pad = written > 0 ? out[written - 1] : 0;
  let paddingValid = written >= 16 && written % 16 === 0 && pad >= 1 && pad <= 16;
  for (let i = written - pad; paddingValid && i < written; i++) paddingValid = out[i] === pad;
  const plainLength = paddingValid ? written - pad : 0;
  return { paddingValid, sha256: createHash('sha256').update(out.subarray(0, plainLength)).digest(), plainLength };
}

parentPort.on('message', (m) => {
  (m.type === 'enc' ? enc(m) : plain(m)).then(
    (answer) => parentPort.postMessage({ id: m.id, ...answer }),
    (err) => parentPort.postMessage({ id: m.id, error: String((err && err.message) || err) }),
  );
});
`;

const FILLED = 0;
const STATE = 1;
const SEQ = 2;
const SIGNAL_BYTES = 1024 * 1024;

interface WorkerAnswer {
  id: number;
  error?: string;
  aborted?: boolean;
  mac?: Uint8Array;
  tail?: Uint8Array;
  encSha256?: Uint8Array;
  length?: number;
  paddingValid?: boolean;
  sha256?: Uint8Array;
  plainLength?: number;
}

interface Slot {
  worker: Worker;
  busy: number;
}

/** What came of a job: both digests and the (until checked, unverified) plain bytes; null if aborted. */
export interface SharedJobResult {
  encrypted: EncryptedDigest;
  plain: PlainDigest & { bytes: Buffer };
}

/**
 * A download being received into shared memory while two workers verify and decrypt it. The
 * receiver writes bytes with `write`, then calls `complete` or `abort`; `result` settles once
 * both workers are done.
 */
export interface SharedJob {
  write(chunk: Buffer): void;
  complete(): void;
  abort(): void;
  result(): Promise<SharedJobResult | null>;
}

export interface SharedJobKeys {
  iv: Buffer;
  cipherKey: Buffer;
  macKey: Buffer;
  withEncSha: boolean;
}

/**
 * Verifies and decrypts large media off the event loop, while it downloads, on up to two worker
 * threads: one hashes the encrypted bytes, the other decrypts them. A download then costs about
 * one decrypt, and the gateway goes on answering other requests meanwhile. Workers start on
 * first use, are unref'd (they never keep the process alive) and are replaced if one dies.
 */
export class MediaCryptoPool {
  private readonly slots: Slot[] = [];
  private readonly pending = new Map<number, { slot: Slot; resolve(a: WorkerAnswer): void; reject(e: Error): void }>();
  private nextId = 1;
  private readonly size = Math.max(1, Math.min(2, availableParallelism()));

  /** Starts both workers on a download of exactly `total` bytes (its announced length). */
  start(total: number, keys: SharedJobKeys): SharedJob {
    const sab = new SharedArrayBuffer(total);
    const view = Buffer.from(sab);
    const ctl = new Int32Array(new SharedArrayBuffer(12));
    const out = new SharedArrayBuffer(Math.max(16, total));
    const signal = () => {
      Atomics.add(ctl, SEQ, 1);
      Atomics.notify(ctl, SEQ);
    };
    const common = { sab, ctl, total, iv: new Uint8Array(keys.iv) };
    const answers = Promise.all([
      this.run({ type: 'enc', ...common, macKey: new Uint8Array(keys.macKey), withSha: keys.withEncSha }),
      this.run({ type: 'plain', ...common, cipherKey: new Uint8Array(keys.cipherKey), out }),
    ]);
    // Settled here too, so that an abandoned job never surfaces as an unhandled rejection.
    answers.catch(() => undefined);
    let received = 0;
    let signalled = 0;
    return {
      write(chunk: Buffer) {
        if (received + chunk.length > total) throw new RangeError('more bytes than announced');
        chunk.copy(view, received);
        received += chunk.length;
        Atomics.store(ctl, FILLED, received);
        // Woken per megabyte, not per socket read: hashing 64 KiB costs less than the wake-up.
        if (received - signalled >= SIGNAL_BYTES) {
          signalled = received;
          signal();
        }
      },
      complete() {
        Atomics.store(ctl, STATE, 1);
        signal();
      },
      abort() {
        Atomics.store(ctl, STATE, 2);
        signal();
      },
      async result() {
        const [e, p] = await answers;
        if (e.aborted || p.aborted) return null;
        const encrypted: EncryptedDigest = { mac: Buffer.from(e.mac ?? []), tail: Buffer.from(e.tail ?? []), length: e.length ?? 0 };
        if (e.encSha256) encrypted.encSha256 = Buffer.from(e.encSha256);
        return { encrypted, plain: { paddingValid: p.paddingValid === true, sha256: Buffer.from(p.sha256 ?? []), bytes: Buffer.from(out, 0, p.plainLength ?? 0) } };
      },
    };
  }

  async close(): Promise<void> {
    const slots = this.slots.splice(0);
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }

  private run(message: Record<string, unknown>): Promise<WorkerAnswer> {
    const slot = this.pick();
    const id = this.nextId++;
    slot.busy++;
    return new Promise<WorkerAnswer>((resolve, reject) => {
      this.pending.set(id, { slot, resolve, reject });
      slot.worker.postMessage({ ...message, id });
    }).finally(() => slot.busy--);
  }

  /** The least busy worker, starting one while fewer than `size` run. */
  private pick(): Slot {
    const idle = this.slots.find((s) => s.busy === 0);
    if (idle) return idle;
    if (this.slots.length < this.size) return this.spawn();
    return this.slots.reduce((a, b) => (b.busy < a.busy ? b : a));
  }

  private spawn(): Slot {
    const worker = new Worker(SOURCE, { eval: true });
    worker.unref();
    const slot: Slot = { worker, busy: 0 };
    worker.on('message', (a: WorkerAnswer) => {
      const job = this.pending.get(a.id);
      if (!job) return;
      this.pending.delete(a.id);
      if (a.error !== undefined) job.reject(new Error(`media crypto worker: ${a.error}`));
      else job.resolve(a);
    });
    const fail = (err: Error) => {
      const at = this.slots.indexOf(slot);
      if (at >= 0) this.slots.splice(at, 1);
      for (const [id, job] of this.pending) {
        if (job.slot !== slot) continue;
        this.pending.delete(id);
        job.reject(err);
      }
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`media crypto worker exited with ${code}`)));
    this.slots.push(slot);
    return slot;
  }
}
