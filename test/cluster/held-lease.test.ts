import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedDocumentStore } from '../../src/infra/docstore/embedded/embedded-document-store.js';
import { onMongoTargets } from '../servers/mongodb/targets.js';
import { heldLeaseContract } from './held-lease.contract.js';

heldLeaseContract('embedded document store', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'held-lease-'));
  const store = await EmbeddedDocumentStore.open({ path: dir });
  return {
    store,
    async cleanup() {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

onMongoTargets('held lease', heldLeaseContract);
