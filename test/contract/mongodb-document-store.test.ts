import { MongoDocumentStore } from '../../src/infra/docstore/mongodb/mongodb-document-store.js';
import { freshDatabase, realServerTarget, testServerTarget, type MongoTarget } from '../servers/mongodb/targets.js';
import { documentStoreContract } from './document-store.contract.js';

/** The DocumentStore contract, unchanged, on the MongoDB adapter: over the test server, and over a real server when one is configured. */
function contractOn(adapterName: string, target: () => Promise<MongoTarget>, skipReason?: string): void {
  describe(adapterName, function () {
    let server: MongoTarget;
    before(async function () {
      if (skipReason) {
        console.log(`      skipped: ${skipReason}`);
        this.skip();
      }
      server = await target();
    });
    after(async () => server?.stop());

    documentStoreContract(adapterName, async () => {
      const database = freshDatabase('contract');
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

contractOn('mongodb adapter over the wire-protocol test server', testServerTarget);

const realUrl = process.env.MONGODB_URL;
contractOn(
  'mongodb adapter on a real server (MONGODB_URL)',
  () => realServerTarget(realUrl as string),
  realUrl ? undefined : 'MONGODB_URL is not set: no real MongoDB to run the contract against',
);
