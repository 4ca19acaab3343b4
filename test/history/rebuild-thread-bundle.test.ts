import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { bundleThread } from '../../scripts/bundle-thread.js';
import { AliasedDocumentStore } from '../../src/infra/docstore/aliased-document-store.js';
import { EmbeddedDocumentStore } from '../../src/infra/docstore/embedded/embedded-document-store.js';
import { EmbeddedEventStore } from '../../src/infra/eventstore/embedded/embedded-event-store.js';
import { CHATS, chatsProjection } from '../../src/projections/chats/chats-projection.js';
import { checksum } from '../../src/rebuild/checksum.js';
import { silentProgress } from '../../src/rebuild/progress.js';
import { selectReadModels } from '../../src/rebuild/read-models.js';
import { Rebuilder } from '../../src/rebuild/rebuilder.js';
import type { FromThread, ThreadTask } from '../../src/rebuild/thread.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * `npm run build` bundles the rebuild's thread into one file (scripts/bundle-thread.ts): that
 * file, built here from the sources the same way, folds what the thread's modules fold.
 */
describe("the rebuild thread's bundle", function () {
  this.timeout(60_000);
  let dir: string;
  let out: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rebuild-bundle-'));
    // Inside the checkout, so that the bundle finds lmdb (left out of it) as dist's does.
    out = join(ROOT, '.tmp', `thread-bundle-${randomUUID()}`);
    await mkdir(out, { recursive: true });
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
    await rm(out, { recursive: true, force: true });
  });

  it('folds chats into the collections it is handed as the rebuild does without it', async () => {
    const bundle = join(out, 'thread-entry.js');
    await bundleThread(fileURLToPath(new URL('../../src/rebuild/thread-entry.ts', import.meta.url)), bundle);
    const paths = { events: join(dir, 'events'), docs: join(dir, 'docs') };
    const events = await EmbeddedEventStore.open({ path: paths.events });
    const docs = await AliasedDocumentStore.open(await EmbeddedDocumentStore.open({ path: paths.docs }));
    try {
      const instanceId = '3EBBUNDLE000000000000000000001';
      const metadata = { instanceId, accountId: 'acc_bundle', occurredAt: '2030-01-01T10:00:00.000Z', actor: { kind: 'network', id: 'sandbox' } };
      const list = Array.from({ length: 300 }, (_, i) => {
        const chat = `55119${String(i % 23).padStart(8, '0')}@s.whatsapp.net`;
        const message = { id: `M${i}`, chat, sender: chat, from_me: i % 3 === 0, is_group: false, push_name: `Contact ${i % 23}`, timestamp_s: 1_893_456_000 + i, type: 'text', text: `hello ${i}` };
        return { id: randomUUID(), type: 'MessageReceived', data: { message, upsert: 'notify' }, metadata };
      });
      await events.append(`session-${instanceId}`, list, 'any');
      const upTo = await events.headPosition();

      // What the rebuild builds on this thread.
      const { results } = await new Rebuilder(events, docs, silentProgress).rebuild(selectReadModels(['chats']));
      const expected = results[0]?.after;
      expect(expected?.documents).to.equal(23);

      // What the bundle builds, handed a fresh collection as a rebuild hands its thread one.
      const fresh = await AliasedDocumentStore.open(docs.inner);
      fresh.adopt(CHATS, 'chats__bundled');
      await chatsProjection.setup?.(fresh);
      const task: ThreadTask = { paths, models: ['chats'], physical: { [CHATS]: 'chats__bundled' }, upTo, writeStep: 10 };
      const worker = new Worker(bundle, { workerData: task });
      const answer = await new Promise<FromThread>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      expect(answer).to.deep.equal({ done: { malformed: [] } });
      expect(await checksum(fresh, [CHATS])).to.deep.equal(expected);
    } finally {
      await events.close();
      await docs.close();
    }
  });
});
