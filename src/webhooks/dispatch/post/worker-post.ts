import type { Worker } from 'node:worker_threads';
import { startWorker } from '../../../infra/worker-thread.js';
import type { PostSettings } from './axios-post.js';
import type { PostAnswer, PostRequest, WebhookPost } from './port.js';
import type { FromWorker, ToWorker } from './worker-entry.js';

interface Pending {
  resolve(answer: PostAnswer): void;
  signal: AbortSignal;
  /** When it was asked for (performance.now()). */
  at: number;
}

export interface StallWatch {
  /** How often the oldest request in flight is looked at. */
  everyMs: number;
  /** A request unanswered for this long means the thread has stopped answering. */
  afterMs: number;
}

/**
 * Webhook POSTs on a thread of their own (an AxiosPost there). The HTTP work of an attempt
 * (axios, undici, signing, the socket writes) was about two fifths of the event loop's time at
 * full load, which also records events, runs the projections and writes outcomes; here it runs
 * beside them. Requests (and answers) made together cross in one message; a microtask, not the
 * next turn of the loop, sends them, since a first attempt often waits for an earlier one of its
 * instance (always so with WEBHOOK_ORDERED).
 *
 * If the thread dies, what it had in flight is answered as failed (the dispatcher retries it: a
 * possible duplicate, never a loss) and the next request starts a new thread. The thread never
 * keeps the process alive when nothing is in flight.
 */
export class WorkerPost implements WebhookPost {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  /** Requests in flight under each caller signal, to abort them together when it fires. */
  private readonly bySignal = new WeakMap<AbortSignal, Set<number>>();
  private sends: { n: number; request: PostRequest }[] = [];
  private next = 1;
  private closed = false;
  private watchdog: NodeJS.Timeout | undefined;
  /** When the current thread said it was ready (performance.now()); undefined while it starts. */
  private readySince: number | undefined;

  private readonly stall: StallWatch;

  constructor(
    private readonly settings: PostSettings,
    /** Told when the thread dies with requests possibly in flight (they are answered failed). */
    private readonly onLost: (reason: string) => void = () => undefined,
    /** Default: every second, 5 s past the request timeout the thread applies itself. */
    stall?: StallWatch,
  ) {
    this.stall = stall ?? { everyMs: 1_000, afterMs: settings.timeoutMs + 5_000 };
  }

  send(request: PostRequest, signal: AbortSignal): Promise<PostAnswer> {
    if (signal.aborted) return Promise.resolve({ kind: 'aborted' });
    if (this.closed) return Promise.resolve({ kind: 'failed', message: 'the webhook sender is closed' });
    const worker = this.worker ?? this.spawn();
    const n = this.next++;
    if (this.pending.size === 0) worker.ref();
    this.watch(signal).add(n);
    const answer = new Promise<PostAnswer>((resolve) => this.pending.set(n, { resolve, signal, at: performance.now() }));
    // The key alone: a Buffer decoded from base64 is a slice of Node's shared pool, and sending it
    // would copy the whole pool block (other small buffers with it) to the thread.
    const own = { ...request, key: Uint8Array.from(request.key) };
    if (this.sends.push({ n, request: own }) === 1) queueMicrotask(() => this.flush());
    return answer;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.watchdog);
    await this.worker?.terminate();
  }

  private flush(): void {
    const queued = this.sends;
    this.sends = [];
    const live: { n: number; request: PostRequest }[] = [];
    for (const send of queued) {
      const pending = this.pending.get(send.n);
      // A thread lost since these were queued has answered them already; a signal that fired
      // meanwhile was told to the thread before these could reach it.
      if (!pending) continue;
      if (pending.signal.aborted) this.settle(send.n, { kind: 'aborted' });
      else live.push(send);
    }
    if (live.length > 0) this.worker?.postMessage({ sends: live } satisfies ToWorker);
  }

  private watch(signal: AbortSignal): Set<number> {
    let set = this.bySignal.get(signal);
    if (!set) {
      const ns = new Set<number>();
      set = ns;
      this.bySignal.set(signal, ns);
      signal.addEventListener('abort', () => this.worker?.postMessage({ abort: [...ns] } satisfies ToWorker), { once: true });
    }
    return set;
  }

  private settle(n: number, answer: PostAnswer): void {
    const pending = this.pending.get(n);
    if (!pending) return;
    this.pending.delete(n);
    this.bySignal.get(pending.signal)?.delete(n);
    if (this.pending.size === 0) this.worker?.unref();
    pending.resolve(pending.signal.aborted && answer.kind === 'failed' ? { kind: 'aborted' } : answer);
  }

  private spawn(): Worker {
    const worker = startWorker(import.meta.url, './worker-entry', this.settings);
    this.readySince = undefined;
    worker.on('message', (message: FromWorker) => {
      if ('ready' in message) this.readySince = performance.now();
      else for (const { n, answer } of message.answers) this.settle(n, answer);
    });
    worker.on('error', (err) => this.lose(worker, err.message));
    worker.on('messageerror', (err) => this.lose(worker, `unreadable answer: ${err.message}`));
    worker.on('exit', (code) => this.lose(worker, `exit code ${code}`));
    worker.unref();
    this.worker = worker;
    this.watchdog ??= setInterval(() => this.watchStalls(), this.stall.everyMs).unref();
    return worker;
  }

  /** What the thread had in flight is answered failed (retried later), and the thread is ended. */
  private lose(worker: Worker, reason: string): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    void worker.terminate();
    for (const n of [...this.pending.keys()]) this.settle(n, { kind: 'failed', message: `the webhook sender thread stopped (${reason})` });
    if (!this.closed) this.onLost(reason);
  }

  /**
   * Timeouts and aborts are the thread's to apply; a thread that stops answering without dying
   * (a stuck loop) would hold every lane and every stop behind it. Requests are kept in the order
   * they were asked for, so the first one is the oldest. A request waits on the thread only once
   * it is ready: loading it on a busy machine can take seconds, and ending it for that would
   * start the same slow load again (a failed load ends it through 'error' or 'exit').
   */
  private watchStalls(): void {
    const oldest = this.pending.values().next().value;
    if (!oldest || !this.worker || this.readySince === undefined) return;
    if (performance.now() - Math.max(oldest.at, this.readySince) < this.stall.afterMs) return;
    this.lose(this.worker, 'it stopped answering');
  }
}
