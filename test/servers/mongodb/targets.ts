import { MongoClient } from 'mongodb';
import { startMongoTestServer, type MongoTestServer } from './server.js';
import { MongoDocumentStore } from '../../../src/infra/docstore/mongodb/mongodb-document-store.js';

/** The URL of one database on the server at `url` (any host list and options kept). */
export function withDatabase(url: string, database: string): string {
  return url.replace(/^(mongodb(?:\+srv)?:\/\/[^/?]+)(\/[^?]*)?/, `$1/${database}`);
}

let counter = 0;

/** A database name no other test uses: tests stay apart on a shared server. */
export function freshDatabase(prefix = 'test'): string {
  return `${prefix}_${process.pid}_${Date.now().toString(36)}_${++counter}`;
}

/**
 * A MongoDB to test against: the wire-protocol test server, or the real one at MONGODB_URL.
 * Drops the databases it handed out when stopped.
 */
export interface MongoTarget {
  url(database: string): string;
  drop(database: string): Promise<void>;
  stop(): Promise<void>;
  /** Set for the test server only. */
  server?: MongoTestServer;
}

export async function testServerTarget(): Promise<MongoTarget> {
  const server = await startMongoTestServer();
  return {
    server,
    url: (database) => server.urlFor(database),
    drop: async () => undefined,
    stop: () => server.close(),
  };
}

export async function realServerTarget(url: string): Promise<MongoTarget> {
  const admin = new MongoClient(url, { serverSelectionTimeoutMS: 5_000 });
  await admin.connect();
  return {
    url: (database) => withDatabase(url, database),
    drop: async (database) => {
      await admin.db(database).dropDatabase();
    },
    stop: () => admin.close(),
  };
}

let shared: Promise<MongoTestServer> | undefined;
const databases = new Map<string, string>();

/**
 * For a test gateway: a database on the real server at MONGODB_URL when set (left in place
 * afterwards), else on one test server shared by the whole run. The same data dir gets the same
 * database: the read models go with the event log, so a gateway restarted on it finds both.
 */
export async function sharedTestServerUrl(dataDir: string): Promise<string> {
  const database = databases.get(dataDir) ?? freshDatabase('gateway');
  databases.set(dataDir, database);
  const real = process.env.MONGODB_URL;
  if (real) return withDatabase(real, database);
  if (!shared) console.log('    (test gateways keep their read models on the MongoDB wire-protocol test server: TEST_DOCSTORE=mongodb)');
  shared ??= startMongoTestServer();
  return (await shared).urlFor(database);
}

export interface FreshMongoStore {
  store: MongoDocumentStore;
  cleanup(): Promise<void>;
}

/**
 * A port's contract on the MongoDB adapter: `run` is given a maker of fresh stores (a database of
 * their own each, dropped after) once over the wire-protocol test server, and once over a real
 * server when MONGODB_URL is set (skipped, saying why, otherwise).
 */
export function onMongoTargets(what: string, run: (adapterName: string, fresh: () => Promise<FreshMongoStore>) => void): void {
  const realUrl = process.env.MONGODB_URL;
  const targets: [string, () => Promise<MongoTarget>, string | undefined][] = [
    ['over the wire-protocol test server', testServerTarget, undefined],
    ['on a real server (MONGODB_URL)', () => realServerTarget(realUrl as string), realUrl ? undefined : `MONGODB_URL is not set: no real MongoDB to run the ${what} contract against`],
  ];
  for (const [where, target, skipReason] of targets) {
    describe(`${what}: mongodb adapter ${where}`, function () {
      let server: MongoTarget;
      before(async function () {
        if (skipReason) {
          console.log(`      skipped: ${skipReason}`);
          this.skip();
        }
        server = await target();
      });
      after(async () => server?.stop());
      run('mongodb adapter', async () => {
        const database = freshDatabase(what.replace(/\W+/g, '-'));
        const store = await MongoDocumentStore.open({ url: server.url(database) });
        return {
          store,
          async cleanup() {
            await store.close();
            await server.drop(database);
          },
        };
      });
    });
  }
}
