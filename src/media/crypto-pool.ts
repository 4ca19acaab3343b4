import { Worker } from 'node:worker_threads';
import { MAC_LENGTH, type EncryptedDigest, type PlainDigest } from '../infra/crypto/whatsapp-media.js';
import { SharedBufferPool } from './shared-buffer-pool.js';

/**
 * The workers' code, plain JavaScript evaluated as-is: it needs nothing but node:crypto, and an
 * inline source loads the same under tsx, in tests and from dist, where a file path would not.
 *
 * Three passes over one received file, each on its own worker so they run side by side:
 * - mac: HMAC-SHA256(macKey, iv + ciphertext), and the 10-byte tail the file carries;
 * - sha: SHA-256 of every byte as received;
 * - plain: AES-256-CBC decrypt into a second shared buffer, PKCS#7 check, SHA-256 of the result.
 * None of them can be split (a hash is one chain), so three workers are as fast as it gets.
 */
const SOURCE = `
const { createDecipheriv, createHash, createHmac } = require('node:crypto');
const { parentPort } = require('node:worker_threads');
const TAIL = ${MAC_LENGTH};
// Decrypted in pieces: one update over many megabytes allocates (and faults in) its own output.
const PIECE = 1 << 20;

function mac(m) {
  const data = Buffer.from(m.sab, 0, m.total);
  const macEnd = Math.max(0, m.total - TAIL);
  const digest = createHmac('sha256', Buffer.from(m.macKey)).update(Buffer.from(m.iv)).update(data.subarray(0, macEnd)).digest();
  return { mac: digest.subarray(0, TAIL), tail: Buffer.from(data.subarray(macEnd)) };
}

function sha(m) {
  return { encSha256: createHash('sha256').update(Buffer.from(m.sab, 0, m.total)).digest() };
}

function plain(m) {
  const data = Buffer.from(m.sab, 0, m.total);
  const out = Buffer.from(m.out);
  const cipherEnd = Math.max(0, m.total - TAIL);
  const end = cipherEnd - (cipherEnd % 16);
  const decipher = createDecipheriv('aes-256-cbc', Buffer.from(m.cipherKey), Buffer.from(m.iv));
  let written = 0;
  for (let at = 0; at < end; at += PIECE) written += decipher.update(data.subarray(at, Math.min(end, at + PIECE))).copy(out, written);
  // final() checks and strips the PKCS#7 padding; it throws when the padding is not valid.
  let paddingValid = true;
  try {
    written += decipher.final().copy(out, written);
  } catch {
    paddingValid = false;
  }
  const plainLength = paddingValid ? written : 0;
  return { paddingValid, sha256: createHash('sha256').update(out.subarray(0, plainLength)).digest(), plainLength };
}

const passes = { mac, sha, plain };
parentPort.on('message', (m) => {
  try {
    parentPort.postMessage({ id: m.id, ...passes[m.type](m) });
  } catch (err) {
    parentPort.postMessage({ id: m.id, error: String((err && err.message) || err) });
  }
});
`;

/** Workers at most: one per pass of a download. They only work while a download is verified. */
const WORKERS = 3;

interface WorkerAnswer {
  id: number;
  error?: string;
  mac?: Uint8Array;
  tail?: Uint8Array;
  encSha256?: Uint8Array;
  paddingValid?: boolean;
  sha256?: Uint8Array;
  plainLength?: number;
}

interface Slot {
  worker: Worker;
  busy: number;
}

/** What came of a job: both digests and the (until checked, unverified) plain bytes; null if aborted. */
interface SharedJobResult {
  encrypted: EncryptedDigest;
  plain: PlainDigest & { bytes: Buffer };
}

/**
 * A download received into shared memory, then verified and decrypted by the workers. The
 * receiver writes bytes with `write`, then calls `complete` (the passes start) or `abort`;
 * `result` settles once every pass is done.
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
 * Verifies and decrypts large media off the event loop. The bytes are received whole first: on a
 * machine with few cores, workers hashing while the bytes arrive take the CPU the transfer needs,
 * and every pass waits for the slowest read anyway. Then the MAC, the encrypted hash and the
 * decrypt-and-hash run at once on their own workers, so a download costs about one hash after
 * its transfer, and the gateway goes on answering other requests meanwhile. Receive buffers are
 * reused (a fresh one costs a page fault per 4 KiB as it fills). Workers start on first use, are
 * unref'd (they never keep the process alive) and are replaced if one dies.
 */
export class MediaCryptoPool {
  private readonly slots: Slot[] = [];
  private readonly pending = new Map<number, { slot: Slot; resolve(a: WorkerAnswer): void; reject(e: Error): void }>();
  private readonly buffers = new SharedBufferPool();
  private nextId = 1;
  private closed = false;

  /** A job for a download of exactly `total` bytes (its announced length). */
  start(total: number, keys: SharedJobKeys): SharedJob {
    if (this.closed) throw new Error('the media crypto pool is closed');
    const sab = this.buffers.acquire(total);
    const view = Buffer.from(sab, 0, total);
    let received = 0;
    let state: 'receiving' | 'verifying' | 'done' = 'receiving';
    let answers: Promise<WorkerAnswer[]> | undefined;
    let out: SharedArrayBuffer | undefined;
    const release = () => {
      if (state === 'done') return;
      state = 'done';
      // After close() the pool keeps nothing: the buffer is simply dropped.
      if (!this.closed) this.buffers.release(sab);
    };
    return {
      write(chunk: Buffer) {
        if (state !== 'receiving') throw new Error('the download is over');
        if (received + chunk.length > total) throw new RangeError('more bytes than announced');
        chunk.copy(view, received);
        received += chunk.length;
      },
      complete: () => {
        if (state !== 'receiving') return;
        state = 'verifying';
        if (received !== total) {
          release();
          return;
        }
        out = new SharedArrayBuffer(Math.max(16, total));
        const common = { sab, total, iv: new Uint8Array(keys.iv) };
        const passes = [
          this.run({ type: 'mac', ...common, macKey: new Uint8Array(keys.macKey) }),
          this.run({ type: 'plain', ...common, cipherKey: new Uint8Array(keys.cipherKey), out }),
          ...(keys.withEncSha ? [this.run({ type: 'sha', ...common })] : []),
        ];
        // The buffer goes back only once no worker reads it any more, whatever became of the others.
        answers = Promise.allSettled(passes).then((settled) => {
          release();
          return settled.map((s) => {
            if (s.status === 'rejected') throw s.reason;
            return s.value;
          });
        });
        // Settled here too, so that an abandoned job never surfaces as an unhandled rejection.
        answers.catch(() => undefined);
      },
      abort: () => {
        if (state === 'receiving') release();
      },
      async result() {
        if (!answers || !out) return null;
        const [m, p, s] = (await answers) as [WorkerAnswer, WorkerAnswer, WorkerAnswer | undefined];
        const encrypted: EncryptedDigest = { mac: Buffer.from(m.mac ?? []), tail: Buffer.from(m.tail ?? []), length: total };
        if (s?.encSha256) encrypted.encSha256 = Buffer.from(s.encSha256);
        return { encrypted, plain: { paddingValid: p.paddingValid === true, sha256: Buffer.from(p.sha256 ?? []), bytes: Buffer.from(out, 0, p.plainLength ?? 0) } };
      },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    const slots = this.slots.splice(0);
    await Promise.all(slots.map((s) => s.worker.terminate()));
    this.buffers.clear();
  }

  /** Never throws: a pass that cannot start (pool closed, no worker) is a rejected pass. */
  private run(message: Record<string, unknown>): Promise<WorkerAnswer> {
    if (this.closed) return Promise.reject(new Error('the media crypto pool is closed'));
    let slot: Slot;
    try {
      slot = this.pick();
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    const id = this.nextId++;
    slot.busy++;
    return new Promise<WorkerAnswer>((resolve, reject) => {
      this.pending.set(id, { slot, resolve, reject });
      slot.worker.postMessage({ ...message, id });
    }).finally(() => slot.busy--);
  }

  /** The least busy worker, starting one while fewer than WORKERS run. */
  private pick(): Slot {
    const idle = this.slots.find((s) => s.busy === 0);
    if (idle) return idle;
    if (this.slots.length < WORKERS) return this.spawn();
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
