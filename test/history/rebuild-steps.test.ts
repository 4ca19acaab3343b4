import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { AliasedDocumentStore } from '../../src/infra/docstore/aliased-document-store.js';
import { EmbeddedDocumentStore } from '../../src/infra/docstore/embedded/embedded-document-store.js';
import type { Collection, Document, DocumentStore } from '../../src/infra/docstore/port.js';
import { EmbeddedEventStore } from '../../src/infra/eventstore/embedded/embedded-event-store.js';
import type { EventData } from '../../src/infra/eventstore/port.js';
import { silentProgress } from '../../src/rebuild/progress.js';
import { selectReadModels } from '../../src/rebuild/read-models.js';
import { Rebuilder } from '../../src/rebuild/rebuilder.js';
import { foldOnThread } from '../../src/rebuild/thread.js';

/**
 * The folded documents are written in transactions of their own at the end of the replay. While a
 * gateway serves, each holds LMDB's one writer and runs on the thread that answers requests: they
 * must stay as small as the serving replay's steps.
 */
describe('rebuild: the folded documents written in steps', function () {
  this.timeout(30_000);
  const CHATS = 1_200;
  let dir: string;
  let events: EmbeddedEventStore;
  let inner: EmbeddedDocumentStore;
  let inserted: number[];

  /** The store, with the size of every insertMany told. */
  function counting(store: DocumentStore): DocumentStore {
    return new Proxy(store, {
      get(target, name, receiver) {
        if (name !== 'collection') return Reflect.get(target, name, receiver) as unknown;
        return (collection: string) => {
          const c = target.collection(collection);
          return new Proxy(c, {
            get(t, n, r) {
              if (n !== 'insertMany') return Reflect.get(t, n, r) as unknown;
              return (docs: Document[]) => (inserted.push(docs.length), t.insertMany(docs));
            },
          }) as Collection;
        };
      },
    });
  }

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rebuild-steps-'));
    events = await EmbeddedEventStore.open({ path: join(dir, 'events') });
    inner = await EmbeddedDocumentStore.open({ path: join(dir, 'docs') });
    inserted = [];
    const instanceId = '3EBSTEPS000000000000000000000001';
    const meta = { instanceId, accountId: 'acc_steps', occurredAt: '2030-01-01T10:00:00.000Z', actor: { kind: 'network', id: 'sandbox' } };
    const message = (i: number): EventData => {
      const chat = `55119${String(i).padStart(8, '0')}@s.whatsapp.net`;
      const data = { message: { id: `M${i}`, chat, sender: chat, from_me: false, is_group: false, timestamp_s: 1_893_456_000 + i, type: 'text', text: 'hi' }, upsert: 'notify' };
      return { id: randomUUID(), type: 'MessageReceived', data, metadata: meta };
    };
    await events.append(`session-${instanceId}`, Array.from({ length: CHATS }, (_, i) => message(i)), 'any');
  });
  afterEach(async () => {
    await events.close();
    await inner.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('in steps of at most 500 documents while a gateway serves, in larger ones otherwise', async () => {
    const docs = await AliasedDocumentStore.open(counting(inner));
    const live = { pause: async () => -1n, resume: async () => undefined };
    await new Rebuilder(events, docs, silentProgress, { live }).rebuild(selectReadModels(['chats']));
    expect(inserted.reduce((a, b) => a + b, 0)).to.equal(CHATS);
    expect(Math.max(...inserted)).to.be.at.most(500);

    inserted = [];
    await new Rebuilder(events, docs, silentProgress).rebuild(selectReadModels(['chats']));
    expect(inserted).to.deep.equal([CHATS]);
  });

  it('on a rebuild thread, in the steps its owner hands it', async () => {
    // The thread writes through stores of its own: its writes are counted as LMDB's commits.
    const env = open({ path: join(dir, 'docs') });
    const lastCommit = () => (env.getStats() as { lastTxnId: number }).lastTxnId;
    try {
      const upTo = await events.headPosition();
      const commitsOfThread = async (writeStep: number): Promise<number> => {
        const physical = `chats__step${writeStep}`;
        const before = lastCommit();
        const paths = { events: join(dir, 'events'), docs: join(dir, 'docs') };
        await foldOnThread({ paths, models: ['chats'], physical: { chats: physical }, upTo, writeStep });
        const commits = lastCommit() - before;
        expect(await inner.collection(physical).count()).to.equal(CHATS);
        return commits;
      };
      // 1,200 chats: three writes of at most 500, or one of them all; the rest (setup) alike.
      const small = await commitsOfThread(500);
      const large = await commitsOfThread(10_000);
      expect(small - large).to.be.at.least(2);
    } finally {
      await env.close();
    }
  });
});
