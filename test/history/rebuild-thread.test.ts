import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AliasedDocumentStore } from '../../src/infra/docstore/aliased-document-store.js';
import { EmbeddedDocumentStore } from '../../src/infra/docstore/embedded/embedded-document-store.js';
import { EmbeddedEventStore } from '../../src/infra/eventstore/embedded/embedded-event-store.js';
import type { EventData } from '../../src/infra/eventstore/port.js';
import { silentProgress } from '../../src/rebuild/progress.js';
import { selectReadModels } from '../../src/rebuild/read-models.js';
import { Rebuilder } from '../../src/rebuild/rebuilder.js';

/**
 * A rebuild of several models on the embedded stores folds chats on a worker thread (ownThread):
 * the result must be what one thread builds, and a stored event that breaks its schema must be
 * told of once, whichever thread met it.
 */
describe('rebuild with a model folded on its own thread', function () {
  this.timeout(30_000);
  let dir: string;
  let events: EmbeddedEventStore;
  let docs: AliasedDocumentStore;
  const instanceId = '3EBTHREAD00000000000000000000001';
  const brokenId = randomUUID();

  const meta = { instanceId, accountId: 'acc_thread', occurredAt: '2030-01-01T10:00:00.000Z', actor: { kind: 'network', id: 'sandbox' } };
  const message = (i: number): EventData => {
    const chat = `55119${String(i % 37).padStart(8, '0')}@s.whatsapp.net`;
    const data = { message: { id: `M${i}`, chat, sender: chat, from_me: false, is_group: false, push_name: `Contact ${i % 37}`, timestamp_s: 1_893_456_000 + i, type: 'text', text: `hello ${i}` }, upsert: 'notify' };
    return { id: randomUUID(), type: 'MessageReceived', data, metadata: meta };
  };

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rebuild-thread-'));
    events = await EmbeddedEventStore.open({ path: join(dir, 'events') });
    docs = await AliasedDocumentStore.open(await EmbeddedDocumentStore.open({ path: join(dir, 'docs') }));
    await events.append(`session-${instanceId}`, [{ id: randomUUID(), type: 'SessionConnected', data: { jid: '5511999990000@s.whatsapp.net', phone: '5511999990000', business: false }, metadata: meta }], 'any');
    // More than a step of the replay (5,000 events), a malformed one in the middle.
    for (let batch = 0; batch < 12; batch++) {
      const list = Array.from({ length: 500 }, (_, i) => message(batch * 500 + i));
      if (batch === 6) list[250] = { id: brokenId, type: 'MessageReceived', data: { upsert: 'notify' }, metadata: meta };
      await events.append(`session-${instanceId}`, list, 'any');
    }
  });
  afterEach(async () => {
    await events.close();
    await docs.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function rebuild(names: string[], thread: boolean) {
    const told: string[] = [];
    const rebuilder = new Rebuilder(events, docs, silentProgress, {
      malformed: (event) => told.push(event.id),
      ...(thread ? { thread: { events: join(dir, 'events'), docs: join(dir, 'docs') } } : {}),
    });
    const { results, stats } = await rebuilder.rebuild(selectReadModels(names));
    return { told, onThread: stats.onThread, after: Object.fromEntries(results.map((r) => [r.name, r.after])) };
  }

  it('builds the same documents as one thread does, and tells of the malformed event once', async () => {
    const alone = await rebuild(['chats', 'history', 'stats'], false);
    const apart = await rebuild(['chats', 'history', 'stats'], true);
    expect(alone.onThread).to.deep.equal([]);
    expect(apart.onThread, 'chats was folded on the thread').to.deep.equal(['chats']);
    expect(apart.after).to.deep.equal(alone.after);
    expect(alone.after.chats?.documents).to.equal(37);
    expect(apart.told).to.deep.equal([brokenId]);
  });

  it('tells of a malformed event only the thread met (no model on this one reads its type)', async () => {
    const apart = await rebuild(['chats', 'instances'], true);
    expect(apart.onThread, 'chats was folded on the thread').to.deep.equal(['chats']);
    expect(apart.told).to.deep.equal([brokenId]);
    expect(apart.after.chats?.documents).to.equal(37);
  });
});
