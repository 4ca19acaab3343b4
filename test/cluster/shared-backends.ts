import { MongoClient, type Collection, type Db } from 'mongodb';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LEASES_COLLECTION, type LeaseDoc } from '../../src/cluster/leases.js';
import { NODES_COLLECTION, placeItems, type NodeDoc } from '../../src/cluster/placement.js';
import { startEventStoreTestServer, type EventStoreTestServer } from '../servers/eventstore/server.js';
import { startMongoTestServer, type MongoTestServer } from '../servers/mongodb/server.js';
import { spawnGateway, type GatewayProcess } from '../support/process.js';

/** The keys every node of one deployment shares (secrets sealed on one node open on another). */
export interface DeploymentKeys {
  server: string;
  jwt: string;
}

export const newDeploymentKeys = (): DeploymentKeys => ({ server: randomBytes(32).toString('base64'), jwt: randomBytes(32).toString('base64') });

export interface SharedBackends {
  /** The EventStoreDB test server (its log is readable: `esdb.log.all`). */
  readonly esdb: EventStoreTestServer;
  /** The leases the nodes hold, read straight from the MongoDB test server. */
  leases(): Collection<LeaseDoc>;
  /** A gateway process on the shared backends, with its own data dir holding the deployment's keys. */
  node(keys: DeploymentKeys, env?: Record<string, string>): Promise<GatewayProcess>;
  /**
   * Once `nodes` nodes are live and every paired session is held by the node the placement puts it
   * on (issue 34: sessions move after a pairing, a join or a death): the holder's process id per
   * instance; null before. Tests that use a session through "its" node wait for this, then look the
   * owner up, instead of assuming the node that paired it keeps it.
   */
  settledOwners(nodes: number): Promise<Map<string, number> | null>;
}

/** The process id in a node id (`<host>:<pid>:<random>`), as the lease holders and membership documents carry it. */
export const pidOfNode = (nodeId: string): number => Number(nodeId.split(':').at(-2));

/**
 * Many nodes on one EventStoreDB and one MongoDB (the test servers), as the suites of issue 15
 * run them: registers the mocha hooks that start the servers before the suite, print what the
 * nodes said about leases and sessions when a test fails, and kill every node and stop the
 * servers after it. Declare it first in the `describe`.
 */
export function useSharedBackends(ttlMs: number): SharedBackends {
  let esdb: EventStoreTestServer | undefined;
  let mongo: MongoTestServer | undefined;
  let client: MongoClient | undefined;
  const dirs: string[] = [];
  const running: GatewayProcess[] = [];
  before(async () => {
    esdb = await startEventStoreTestServer();
    mongo = await startMongoTestServer();
    client = new MongoClient(mongo.urlFor('gateway'));
  });
  afterEach(function () {
    if (this.currentTest?.state === 'failed') for (const gw of running) console.log(gw.logs.filter((l) => /cluster|sessions|"level":[45]0/.test(l)).slice(-40).join('\n'));
  });
  after(async () => {
    for (const gw of running) if (gw.child.exitCode === null && gw.child.signalCode === null) gw.child.kill('SIGKILL');
    await client?.close();
    await mongo?.close();
    await esdb?.close();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });
  const started = <T>(value: T | undefined): T => value ?? notYet();
  return {
    get esdb() {
      return started(esdb);
    },
    leases: () => started(client).db('gateway').collection<LeaseDoc>(LEASES_COLLECTION),
    settledOwners: (nodes) => settledOwnersIn(started(client).db('gateway'), nodes),
    async node(keys, env = {}) {
      const dir = await mkdtemp(join(tmpdir(), 'gw-node-'));
      dirs.push(dir);
      await writeFile(join(dir, 'server.key'), keys.server, { mode: 0o600 });
      await writeFile(join(dir, 'jwt.key'), keys.jwt, { mode: 0o600 });
      const gw = await spawnGateway({
        DATA_DIR: dir,
        EVENTSTORE_URL: started(esdb).url,
        MONGODB_URL: started(mongo).urlFor('gateway'),
        MESSAGING_NETWORK: 'sandbox',
        LEASE_TTL_MS: String(ttlMs),
        READ_YOUR_WRITES_TIMEOUT_MS: '8000',
        ...env,
      });
      running.push(gw);
      return gw;
    },
  };
}

function notYet(): never {
  throw new Error('the shared backends are read outside the suite (before `before` or after `after`)');
}

/** settledOwners on the database the nodes share. */
export async function settledOwnersIn(db: Db, nodes: number): Promise<Map<string, number> | null> {
  const now = Date.now();
  const live = (await db.collection<NodeDoc>(NODES_COLLECTION).find({ expiresAt: { $gt: now } }).toArray()).map((n) => n._id);
  if (live.length !== nodes) return null;
  // Tests run no rebuild: the read model is under its logical name.
  const paired = (await db.collection<{ _id: string }>('session_status').find({ paired: true }).toArray()).map((s) => s._id);
  const placed = placeItems(paired, live);
  const leases = new Map((await db.collection<LeaseDoc>(LEASES_COLLECTION).find({ _id: { $in: paired.map((id) => `session:${id}`) } }).toArray()).map((l) => [l._id, l]));
  const owners = new Map<string, number>();
  for (const id of paired) {
    const lease = leases.get(`session:${id}`);
    if (!lease || lease.holder === null || lease.expiresAt <= now || lease.holder !== placed.get(id)) return null;
    owners.set(id, pidOfNode(lease.holder));
  }
  return owners;
}

/** Waits (on a busy machine, generously) until the sessions have settled where the placement puts them; their owners by process id. */
export async function settled(cluster: Pick<SharedBackends, 'settledOwners'>, nodes: number, timeoutMs = 60_000): Promise<Map<string, number>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const owners = await cluster.settledOwners(nodes);
    if (owners) return owners;
    if (Date.now() > deadline) throw new Error(`the sessions did not settle on ${nodes} nodes within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
