import type { Config } from '../infra/config/config.js';
import { openBackends } from '../infra/backends.js';
import { AliasedDocumentStore } from '../infra/docstore/aliased-document-store.js';
import { rebuildInGateway } from './control-client.js';
import { Leases } from '../cluster/leases.js';
import { PROJECTIONS_LEASE } from '../cluster/leased-projections.js';
import { systemClock } from '../infra/clock.js';
import type { Progress } from './progress.js';
import { selectReadModels } from './read-models.js';
import { Rebuilder, type RebuildResult, type RebuildStats } from './rebuilder.js';

export { UnknownReadModelError } from './read-models.js';

export class NodesRunningError extends Error {}

export interface RebuildOutcome {
  results: RebuildResult[];
  stats: RebuildStats;
  /** Whether a running gateway did it while it kept serving, or this process with the stores. */
  where: 'gateway' | 'offline';
}

/**
 * `npm run rebuild` against the configured backends. When a gateway runs on the data directory
 * it does the rebuild while it keeps serving (asked over its control socket: the embedded stores
 * are one process's at a time, and a gateway on MongoDB must swap its own readers and
 * projections); otherwise this process opens the stores and rebuilds them.
 */
export async function runRebuild(config: Config, names: readonly string[], progress: Progress, write: (line: string) => void): Promise<RebuildOutcome> {
  const models = selectReadModels(names);
  const remote = await rebuildInGateway(config.DATA_DIR, models.map((m) => m.name), progress);
  const outcome: RebuildOutcome = remote ? { ...remote, where: 'gateway' } : { ...(await offline(config, models, progress)), where: 'offline' };
  write(outcome.where === 'gateway' ? 'rebuilt by the running gateway, which kept serving' : 'rebuilt with the gateway stopped');
  if (outcome.stats.onThread.length > 0) write(`folded on a worker thread beside the others: ${outcome.stats.onThread.join(', ')}`);
  write('read model   documents  checksum before                                                   checksum after');
  for (const r of outcome.results) {
    const same = r.before.sha256 === r.after.sha256 ? 'same' : 'CHANGED';
    write(`${r.name.padEnd(12)} ${String(r.after.documents).padStart(9)}  ${r.before.sha256}  ${r.after.sha256}  ${same}`);
  }
  return outcome;
}

async function offline(config: Config, models: ReturnType<typeof selectReadModels>, progress: Progress): Promise<{ results: RebuildResult[]; stats: RebuildStats }> {
  const backends = await openBackends(config);
  try {
    if (config.EVENTSTORE_URL !== undefined && config.MONGODB_URL !== undefined) {
      // Nodes writing the shared read models would not see the swap: they must be stopped first.
      const writer = await new Leases(backends.docs, 'rebuild', systemClock).holder(PROJECTIONS_LEASE);
      if (writer) throw new NodesRunningError(`gateway node ${writer.holder} writes the read models (its lease runs until ${new Date(writer.expiresAt).toISOString()}): stop every node, then rebuild`);
    }
    const docs = await AliasedDocumentStore.open(backends.docs);
    return await new Rebuilder(backends.events, docs, progress, backends.embedded ? { thread: backends.embedded } : {}).rebuild(models);
  } finally {
    await backends.close();
  }
}
