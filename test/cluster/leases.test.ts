import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedDocumentStore } from '../../src/infra/docstore/embedded/embedded-document-store.js';
import { MongoDocumentStore } from '../../src/infra/docstore/mongodb/mongodb-document-store.js';
import { freshDatabase, realServerTarget, testServerTarget, type MongoTarget } from '../servers/mongodb/targets.js';
import { leasesContract } from './leases.contract.js';

leasesContract('embedded document store', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'leases-'));
  const store = await EmbeddedDocumentStore.open({ path: dir });
  return {
    store,
    async cleanup() {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

/** The contract on the MongoDB adapter: over the test server, and over a real server when MONGODB_URL is set. */
function onMongo(title: string, target: () => Promise<MongoTarget>, skipReason?: string): void {
  describe(title, function () {
    let server: MongoTarget;
    before(async function () {
      if (skipReason) {
        console.log(`      skipped: ${skipReason}`);
        this.skip();
      }
      server = await target();
    });
    after(async () => server?.stop());
    leasesContract('mongodb adapter', async () => {
      const database = freshDatabase('leases');
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

onMongo('over the MongoDB wire-protocol test server', testServerTarget);
const realUrl = process.env.MONGODB_URL;
onMongo('on a real MongoDB (MONGODB_URL)', () => realServerTarget(realUrl as string), realUrl ? undefined : 'MONGODB_URL is not set: no real MongoDB to run the lease contract against');
