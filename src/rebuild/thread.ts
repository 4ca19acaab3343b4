import { startWorker } from '../infra/worker-thread.js';

/** The directories of the embedded stores, which a worker thread can open beside their owner. */
export interface EmbeddedStorePaths {
  events: string;
  docs: string;
}

/** What a rebuild hands the thread: which models, into which fresh collections, up to where. */
export interface ThreadTask {
  paths: EmbeddedStorePaths;
  models: string[];
  /** Logical collection name → the fresh physical one being built. */
  physical: Record<string, string>;
  /** The last log position to fold. */
  upTo: bigint;
  /** Folded documents per write transaction (RebuilderOptions.writeStep). */
  writeStep: number;
}

export interface MalformedEvent {
  id: string;
  type: string;
  streamId: string;
  reason: string;
}

export type FromThread = { done: { malformed: MalformedEvent[] } } | { failed: string };

/**
 * Folds some read models' part of a rebuild on a worker thread (see thread-entry.ts): the fold is
 * CPU work, and a rebuild of every model on one thread used one of the machine's cores. Resolves
 * once the thread has written its models' folded documents and closed its stores.
 */
export function foldOnThread(task: ThreadTask): Promise<{ malformed: MalformedEvent[] }> {
  const worker = startWorker(import.meta.url, './thread-entry', task);
  const done = new Promise<{ malformed: MalformedEvent[] }>((resolve, reject) => {
    worker.once('message', (message: FromThread) => {
      if ('done' in message) resolve(message.done);
      else reject(new Error(`rebuild thread failed: ${message.failed}`));
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`rebuild thread exited with code ${code} before it was done`)));
  });
  // Awaited by the rebuild; until then a failure must not count as unhandled.
  done.catch(() => undefined);
  return done;
}
