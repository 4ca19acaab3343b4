import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedDocumentStore } from '../../src/infra/docstore/embedded/embedded-document-store.js';
import { MongoDocumentStore } from '../../src/infra/docstore/mongodb/mongodb-document-store.js';
import { freshDatabase, testServerTarget, type MongoTarget } from '../servers/mongodb/targets.js';
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

describe('over the MongoDB wire-protocol test server', () => {
  let server: MongoTarget;
  before(async () => (server = await testServerTarget()));
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
