import { parentPort, workerData } from 'node:worker_threads';
import { AxiosPost, type PostSettings } from './axios-post.js';
import type { PostAnswer, PostRequest } from './port.js';

/** The thread's side of WorkerPost (worker-post.ts): requests in, answers out, both in batches. */
export type ToWorker = { sends: { n: number; request: PostRequest }[] } | { abort: number[] };
type Answers = { n: number; answer: PostAnswer }[];
/** `ready` once, when the thread has loaded and listens: its start-up is not a stall. */
export type FromWorker = { answers: Answers } | { ready: true };

const port = parentPort;
if (port) {
  const post = new AxiosPost(workerData as PostSettings);
  const inFlight = new Map<number, AbortController>();
  let answers: Answers = [];

  // Answers that settle together (in the same microtask run) go back in one message.
  const flush = () => {
    const batch: FromWorker = { answers };
    answers = [];
    port.postMessage(batch);
  };
  const answer = (n: number, result: PostAnswer) => {
    inFlight.delete(n);
    if (answers.push({ n, answer: result }) === 1) queueMicrotask(flush);
  };

  port.on('message', (message: ToWorker) => {
    if ('abort' in message) {
      for (const n of message.abort) inFlight.get(n)?.abort();
      return;
    }
    for (const { n, request } of message.sends) {
      const abort = new AbortController();
      inFlight.set(n, abort);
      post.send(request, abort.signal).then(
        (result) => answer(n, result),
        (err: unknown) => answer(n, { kind: 'failed', message: err instanceof Error ? err.message : String(err) }),
      );
    }
  });
  port.postMessage({ ready: true } satisfies FromWorker);
}
