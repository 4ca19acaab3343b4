import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/infra/config/config.js';
import { silentProgress } from '../../src/rebuild/progress.js';
import { NodesRunningError, runRebuild } from '../../src/rebuild/run.js';
import { eventStoreFor, releaseEventStore } from '../servers/eventstore/targets.js';
import { sharedTestServerUrl } from '../servers/mongodb/targets.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

/**
 * A rebuild swaps collection names in the process that does it: nodes that keep serving from the
 * shared MongoDB would not see the swap. So with nodes running, a rebuild is refused, both when a
 * node is asked over its control socket and when the CLI would open the shared stores itself.
 */
describe('rebuilding read models shared by several nodes', function () {
  this.timeout(60_000);
  let dir: string;
  let cliDir: string;
  let env: Record<string, string>;
  let node: TestGateway | undefined;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gw-rebuild-node-'));
    cliDir = await mkdtemp(join(tmpdir(), 'gw-rebuild-cli-'));
    env = { EVENTSTORE_URL: await eventStoreFor(dir), MONGODB_URL: await sharedTestServerUrl(dir) };
    node = await startTestGateway(env, {}, dir);
  });
  after(async () => {
    await node?.stop();
    await releaseEventStore(dir);
    await rm(dir, { recursive: true, force: true });
    await rm(cliDir, { recursive: true, force: true });
  });

  const rebuild = (dataDir: string) => runRebuild(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...env }), ['instances'], silentProgress, () => undefined);

  it('is refused by a node asked to rebuild while it serves', async () => {
    const error = (await rebuild(dir).catch((e: unknown) => e)) as Error;
    expect(error).to.be.instanceOf(Error);
    expect(error.message).to.match(/single node/);
  });

  it('is refused by the CLI while a node writes the read models, and runs once every node is stopped', async () => {
    const error = await rebuild(cliDir).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(NodesRunningError);
    await node?.stop();
    node = undefined;
    const outcome = await rebuild(cliDir);
    expect(outcome.where).to.equal('offline');
    expect(outcome.results.map((r) => r.name)).to.deep.equal(['instances']);
  });
});
