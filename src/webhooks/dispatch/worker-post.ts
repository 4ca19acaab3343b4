import { Worker } from 'node:worker_threads';
import type { PostSettings } from './axios-post.js';
import type { PostAnswer, PostRequest, WebhookPost } from './post.js';
import type { FromWorker, ToWorker } from './post-worker.js';

interface Pending {
  resolve(answer: PostAnswer): void;
  signal: AbortSignal;
}

/**
 * Webhook POSTs on a thread of their own (an AxiosPost there). The HTTP work of an attempt
 * (axios, undici, signing, the socket writes) was about two fifths of the event loop's time at
 * full load, which also records events, runs the projections and writes outcomes; here it runs
 * beside them. Requests (and answers) made together cross in one message; a microtask, not the
 * next turn of the loop, sends them, since every first attempt of an instance waits for the last.
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

  constructor(
    private readonly settings: PostSettings,
    /** Told when the thread dies with requests possibly in flight (they are answered failed). */
    private readonly onLost: (reason: string) => void = () => undefined,
  ) {}

  send(request: PostRequest, signal: AbortSignal): Promise<PostAnswer> {
    if (signal.aborted) return Promise.resolve({ kind: 'aborted' });
    if (this.closed) return Promise.resolve({ kind: 'failed', message: 'the webhook sender is closed' });
    const worker = this.worker ?? this.spawn();
    const n = this.next++;
    if (this.pending.size === 0) worker.ref();
    this.watch(signal).add(n);
    const answer = new Promise<PostAnswer>((resolve) => this.pending.set(n, { resolve, signal }));
    if (this.sends.push({ n, request }) === 1) queueMicrotask(() => this.flush());
    return answer;
  }

  async close(): Promise<void> {
    this.closed = true;
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
    const worker = startThread(this.settings);
    worker.on('message', (message: FromWorker) => {
      for (const { n, answer } of message.answers) this.settle(n, answer);
    });
    const lost = (reason: string) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      if (!this.closed) this.onLost(reason);
      for (const n of [...this.pending.keys()]) this.settle(n, { kind: 'failed', message: `the webhook sender thread stopped (${reason})` });
    };
    worker.on('error', (err) => lost(err.message));
    worker.on('exit', (code) => lost(`exit code ${code}`));
    worker.unref();
    this.worker = worker;
    return worker;
  }
}

/** From the built JavaScript as is; from the TypeScript sources (tests, bench) through tsx. */
function startThread(settings: PostSettings): Worker {
  const here = import.meta.url;
  if (!here.endsWith('.ts')) return new Worker(new URL('./post-worker.js', here), { workerData: settings });
  const tsx = import.meta.resolve('tsx/esm/api');
  const entry = new URL('./post-worker.ts', here).href;
  const source = `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(source, { eval: true, workerData: settings });
}
