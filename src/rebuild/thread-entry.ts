import { parentPort, workerData } from 'node:worker_threads';
import { AliasedDocumentStore } from '../infra/docstore/aliased-document-store.js';
import { EmbeddedDocumentStore } from '../infra/docstore/embedded/embedded-document-store.js';
import { openLogReader } from '../infra/eventstore/embedded/log-reader.js';
import { silentProgress } from './progress.js';
import { selectReadModels } from './read-models.js';
import { Rebuilder } from './rebuilder.js';
import type { FromThread, MalformedEvent, ThreadTask } from './thread.js';

/**
 * The thread's side of foldOnThread (thread.ts): opens the embedded stores its owner holds, folds
 * the named models up to the position given into their fresh collections, and says so.
 */
async function run(task: ThreadTask): Promise<MalformedEvent[]> {
  const { upTo } = task;
  const log = openLogReader(task.paths.events);
  const inner = await EmbeddedDocumentStore.open({ path: task.paths.docs });
  try {
    const fresh = await AliasedDocumentStore.open(inner);
    for (const [logical, physical] of Object.entries(task.physical)) fresh.adopt(logical, physical);
    const malformed: MalformedEvent[] = [];
    const source = {
      readAll: (options: { after?: bigint; maxCount?: number } = {}) => log.readAll({ ...options, upTo }),
      headPosition: async () => upTo,
    };
    const rebuilder = new Rebuilder(source, fresh, silentProgress, {
      malformed: (event, reason) => malformed.push({ id: event.id, type: event.type, streamId: event.streamId, reason }),
      writeStep: task.writeStep,
    });
    await rebuilder.foldUpTo(selectReadModels(task.models), fresh, upTo);
    return malformed;
  } finally {
    await inner.close();
    await log.close();
  }
}

const port = parentPort;
if (port) {
  run(workerData as ThreadTask).then(
    (malformed) => port.postMessage({ done: { malformed } } satisfies FromThread),
    (err: unknown) => port.postMessage({ failed: err instanceof Error ? (err.stack ?? err.message) : String(err) } satisfies FromThread),
  );
}
