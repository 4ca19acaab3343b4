import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * The measuring half of bench/rebuild.ts, run in a node process started as `npm run rebuild`
 * starts one (its V8 settings): the rate of reading the log, of rebuilding every model, and of
 * each model alone, all in this process. One JSON line per measurement on stdout.
 *
 * JavaScript, run by node as it is: the rebuild's thread inherits its process's node options,
 * and through tsx's loader (the bench's TypeScript) it loaded every module 8% slower than the
 * command does.
 */
const load = (path) => import(pathToFileURL(resolve(fileURLToPath(import.meta.url), '../../dist', path)).href);
const { AliasedDocumentStore } = await load('infra/docstore/aliased-document-store.js');
const { EmbeddedDocumentStore } = await load('infra/docstore/embedded/embedded-document-store.js');
const { EmbeddedEventStore } = await load('infra/eventstore/embedded/embedded-event-store.js');
const { silentProgress } = await load('rebuild/progress.js');
const { READ_MODELS } = await load('rebuild/read-models.js');
const { Rebuilder } = await load('rebuild/rebuilder.js');

/** @param {object} line */
const say = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);

/** Events per second of reading the whole log in the rebuild's reads (a thousand at a time), doing nothing with them. */
async function readRate(events) {
  const started = performance.now();
  let after = -1n;
  let count = 0;
  for (;;) {
    const batch = await events.readAll({ after, maxCount: 1_000 });
    if (batch.length === 0) break;
    after = batch[batch.length - 1].position;
    count += batch.length;
  }
  return count / ((performance.now() - started) / 1000);
}

const dir = process.argv[2];
const events = await EmbeddedEventStore.open({ path: join(dir, 'events') });
const docs = await AliasedDocumentStore.open(await EmbeddedDocumentStore.open({ path: join(dir, 'docs') }));
try {
  // First, in a process that has done nothing yet, as `npm run rebuild` runs it on the embedded
  // stores: the costliest fold on a thread of its own.
  const thread = { events: join(dir, 'events'), docs: join(dir, 'docs') };
  const { stats } = await new Rebuilder(events, docs, silentProgress, { thread }).rebuild(READ_MODELS);
  say({ all: { events: stats.events, seconds: stats.seconds } });
  say({ read: await readRate(events) });
  // Where the time goes: each read model rebuilt alone, over the same log (each reads it whole).
  for (const model of READ_MODELS) {
    const alone = await new Rebuilder(events, docs, silentProgress).rebuild([model]);
    say({ alone: { name: model.name, events: alone.stats.events, seconds: alone.stats.seconds } });
  }
} finally {
  await events.close();
  await docs.close();
}
