import type { Config } from '../infra/config/config.js';
import { openBackends } from '../infra/backends.js';
import { AliasedDocumentStore } from '../infra/docstore/aliased-document-store.js';
import type { Progress } from './progress.js';
import { READ_MODELS, type ReadModel } from './read-models.js';
import { Rebuilder, type RebuildResult, type RebuildStats } from './rebuilder.js';

export class UnknownReadModelError extends Error {}

/** The named read models (none: all of them), or an error naming the unknown ones. */
function selectReadModels(names: readonly string[]): ReadModel[] {
  if (names.length === 0) return [...READ_MODELS];
  const unknown = names.filter((n) => !READ_MODELS.some((m) => m.name === n));
  if (unknown.length > 0) {
    throw new UnknownReadModelError(`unknown read model: ${unknown.join(', ')} (known: ${READ_MODELS.map((m) => m.name).join(', ')})`);
  }
  return READ_MODELS.filter((m) => names.includes(m.name));
}

/**
 * `npm run rebuild` against the configured backends. The embedded backends are one process's
 * at a time (the data-dir lock): the gateway is stopped for it, and serves the swapped-in models
 * when it starts again.
 */
export async function runRebuild(config: Config, names: readonly string[], progress: Progress, write: (line: string) => void): Promise<{ results: RebuildResult[]; stats: RebuildStats }> {
  const models = selectReadModels(names);
  const backends = await openBackends(config);
  try {
    const docs = await AliasedDocumentStore.open(backends.docs);
    const outcome = await new Rebuilder(backends.events, docs, progress).rebuild(models);
    write('read model   documents  checksum before                                                   checksum after');
    for (const r of outcome.results) {
      const same = r.before.sha256 === r.after.sha256 ? 'same' : 'CHANGED';
      write(`${r.name.padEnd(12)} ${String(r.after.documents).padStart(9)}  ${r.before.sha256}  ${r.after.sha256}  ${same}`);
    }
    return outcome;
  } finally {
    await backends.close();
  }
}
