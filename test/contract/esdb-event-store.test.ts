import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { EsdbEventStore } from '../../src/infra/eventstore/esdb/esdb-event-store.js';
import type { EventData } from '../../src/infra/eventstore/port.js';
import { startEventStoreTestServer, type EventStoreTestServer } from '../servers/eventstore/server.js';

function event(type: string): EventData {
  return { id: randomUUID(), type, data: { type }, metadata: {} };
}

/** What the EventStoreDB adapter adds beyond the port contract: system events, paging, shutdown, failures. */
describe('EsdbEventStore over the gRPC test server', () => {
  let server: EventStoreTestServer;
  let store: EsdbEventStore;

  beforeEach(async () => {
    server = await startEventStoreTestServer();
    store = await EsdbEventStore.open({ url: server.url });
  });

  afterEach(async () => {
    await store.close();
    await server.close();
  });

  it('keeps system events out of readAll, headPosition and subscriptions', async () => {
    await store.append('s', [event('A')], 'no_stream');
    const b = await store.append('t', [event('B')], 'no_stream');
    await store.setStreamMetadata('s', { maxAgeSeconds: 60 });
    await store.setStreamMetadata('t', { maxAgeSeconds: 60 });
    expect(server.log.all.map((e) => e.type)).to.deep.equal(['A', 'B', '$metadata', '$metadata']);

    expect((await store.readAll()).map((e) => e.type)).to.deep.equal(['A', 'B']);
    expect(await store.headPosition()).to.equal(b.position);
    const subscription = store.subscribeToAll();
    try {
      expect((await subscription.nextBatch(10)).map((e) => e.type)).to.deep.equal(['A', 'B']);
      await store.append('s', [event('C')], 0n);
      expect((await subscription.nextBatch(10)).map((e) => e.type)).to.deep.equal(['C']);
    } finally {
      await subscription.unsubscribe();
    }
    // Only ours was filtered: the server's filter saw the $metadata events and skipped them.
    expect(server.log.all.filter((e) => e.type === '$metadata')).to.have.length(2);
  });

  it('keeps other metadata of a stream when setting $maxAge', async () => {
    await store.append('s', [event('A'), event('B')], 'no_stream');
    await store.append('$$s', [{ id: randomUUID(), type: '$metadata', data: { $maxCount: 1, $tb: 0 }, metadata: {} }], 'any');
    await store.setStreamMetadata('s', { maxAgeSeconds: 3600 });
    const last = server.log.all.at(-1);
    expect(JSON.parse(Buffer.from(last?.data ?? []).toString('utf8'))).to.deep.equal({ $maxCount: 1, $tb: 0, $maxAge: 3600 });
    await store.setStreamMetadata('s', {});
    expect(await store.getStreamMetadata('s')).to.deep.equal({});
    expect((await store.readStream('s')).map((e) => e.type)).to.deep.equal(['B']);
  });

  it('writes stream metadata only when the retention changes', async () => {
    await store.setStreamMetadata('session-1', { maxAgeSeconds: 86_400 });
    await store.setStreamMetadata('session-1', { maxAgeSeconds: 86_400 });
    expect(server.log.all.filter((e) => e.streamId === '$$session-1')).to.have.length(1);
    await store.setStreamMetadata('session-1', { maxAgeSeconds: 3_600 });
    expect(await store.getStreamMetadata('session-1')).to.deep.equal({ maxAgeSeconds: 3_600 });
    expect(server.log.all.filter((e) => e.streamId === '$$session-1')).to.have.length(2);
  });

  it('reads $all across pages, after a position and up to maxCount', async () => {
    for (let i = 0; i < 25; i++) await store.append(`s-${i % 3}`, Array.from({ length: 100 }, (_, j) => event(`E${i * 100 + j}`)), 'any');
    const all = await store.readAll();
    expect(all).to.have.length(2500);
    const after = all[998]?.position as bigint;
    const page = await store.readAll({ after, maxCount: 1200 });
    expect(page.map((e) => e.type)).to.deep.equal(all.slice(999, 2199).map((e) => e.type));
    expect(await store.readAll({ after: all[2499]?.position })).to.deep.equal([]);
  });

  it('sends concurrent appends of many writers on one BatchAppend call, which the server commits in groups', async () => {
    // A server whose flush takes 2 ms, as a disk would: appends arriving meanwhile share the next one.
    const slow = await startEventStoreTestServer({ flushMs: 2 });
    const writers = await EsdbEventStore.open({ url: slow.url });
    try {
      const results = await Promise.all(Array.from({ length: 200 }, (_, i) => writers.append(`w-${i}`, [event(`E${i}`)], 'no_stream')));
      expect(new Set(results.map((r) => r.position)).size).to.equal(200);
      expect(slow.stats).to.include({ appendCalls: 0, batchAppendCalls: 1, batchedAppends: 200 });
      expect(slow.stats.commits).to.be.below(50);
    } finally {
      await writers.close();
      await slow.close();
    }
  });

  it('answers every append in flight before close completes', async () => {
    const appends = Array.from({ length: 50 }, (_, i) => store.append(`c-${i}`, [event(`E${i}`)], 'no_stream'));
    await store.close();
    const results = await Promise.allSettled(appends);
    expect(results.filter((r) => r.status === 'fulfilled')).to.have.length(50);
    expect(server.log.all).to.have.length(50);
    expect(() => store.subscribeToAll()).to.throw(/closed/);
  });

  it('keeps a subscription across a server outage: waits, subscribes again, skips and repeats nothing', async () => {
    await store.append('s', [event('A'), event('B')], 'no_stream');
    const subscription = store.subscribeToAll();
    try {
      expect((await subscription.nextBatch(1)).map((e) => e.type)).to.deep.equal(['A']);
      const pending = subscription.nextBatch(10);
      expect((await pending).map((e) => e.type)).to.deep.equal(['B']);
      const waiting = subscription.nextBatch(10);
      const port = Number(new URL(server.url.replace('esdb://', 'http://')).port);
      await server.close();
      // Appended while this client was cut off, by another writer, then the server is back.
      server.log.append('t', [{ id: randomUUID(), type: 'C', contentType: 'application/json', data: Buffer.from('{}'), customMetadata: Buffer.from('{}') }], 'any');
      server = await startEventStoreTestServer({ port, log: server.log });
      const resumed = await Promise.race([waiting, new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 10_000))]);
      expect(resumed === 'hung' ? resumed : resumed.map((e) => e.type)).to.deep.equal(['C']);
      await store.append('s', [event('D')], 1n);
      expect((await subscription.nextBatch(10)).map((e) => e.type)).to.deep.equal(['D']);
    } finally {
      await subscription.unsubscribe();
    }
  });

  it('follows the head of $all on one server subscription however many subscribe, handing each the same frozen event', async () => {
    await store.append('s', [event('A')], 'no_stream');
    const subscriptions = Array.from({ length: 20 }, () => store.subscribeToAll());
    try {
      const before = await Promise.all(subscriptions.map((s) => s.nextBatch(10)));
      expect(before.map((batch) => batch.map((e) => e.type))).to.deep.equal(subscriptions.map(() => ['A']));
      await store.append('s', [event('B'), event('C')], 0n);
      const live = await Promise.all(
        subscriptions.map(async (s) => {
          const got = await s.nextBatch(10);
          if (got.length < 2) got.push(...(await s.nextBatch(10)));
          return got;
        }),
      );
      expect(live.map((batch) => batch.map((e) => e.type))).to.deep.equal(subscriptions.map(() => ['B', 'C']));
      // One stream from the server for all twenty, and one decoded object per event for all of them.
      expect(server.stats.subscriptionsOpened).to.equal(1);
      for (const batch of live) {
        expect(batch[0]).to.equal(live[0]?.[0]);
        expect(Object.isFrozen(batch[0]?.data)).to.equal(true);
      }
    } finally {
      await Promise.all(subscriptions.map((s) => s.unsubscribe()));
    }
  });

  it('serves a subscriber behind the shared tail from the log until it reaches it, skipping and repeating nothing', async () => {
    const small = await EsdbEventStore.open({ url: server.url, tailCapacity: 8 });
    try {
      await small.append('s', [event('start')], 'any');
      const live = small.subscribeToAll();
      const heavy = { id: randomUUID(), type: 'Heavy', data: { blob: 'x'.repeat(40_000) }, metadata: {} };
      // Appends racing with the readers: small batches, a heavy event the tail does not keep, more.
      const writing = (async () => {
        for (let i = 0; i < 60; i++) await small.append(`s-${i % 4}`, Array.from({ length: 1 + (i % 5) }, () => event(`E${i}`)), 'any');
        await small.append('h', [heavy], 'any');
        for (let i = 0; i < 40; i++) await small.append(`s-${i % 4}`, [event(`F${i}`)], 'any');
        await small.append('end', [event('end')], 'any');
      })();
      const readUntilEnd = async (subscription: ReturnType<typeof small.subscribeToAll>, sizes: number[]) => {
        const got: bigint[] = [];
        for (let i = 0; ; i++) {
          const batch = await subscription.nextBatch(sizes[i % sizes.length] as number);
          got.push(...batch.map((e) => e.position));
          if (batch.some((e) => e.type === 'end')) return got;
        }
      };
      const [fromLive, fromStart] = await Promise.all([readUntilEnd(live, [3, 1, 500]), (async () => {
        // Opened once the tail has let the first events go: it starts from the log.
        await new Promise((r) => setTimeout(r, 0));
        const behind = small.subscribeToAll();
        try {
          return await readUntilEnd(behind, [7, 2]);
        } finally {
          await behind.unsubscribe();
        }
      })()]);
      await writing;
      const all = (await small.readAll()).map((e) => e.position);
      expect(fromStart).to.deep.equal(all);
      expect(fromLive).to.deep.equal(all);
      const middle = all[150] as bigint;
      const late = small.subscribeToAll({ after: middle });
      try {
        expect(await readUntilEnd(late, [11])).to.deep.equal(all.slice(151));
      } finally {
        await late.unsubscribe();
      }
      await live.unsubscribe();
      expect(server.stats.subscriptionsOpened).to.equal(1);
    } finally {
      await small.close();
    }
  });

  it('refuses malformed appends before sending anything, as the embedded store does', async () => {
    const good = event('A');
    const refusals = [
      store.append('', [good], 'any'),
      store.append('s', [{ ...good, id: 'not-a-uuid' }], 'any'),
      store.append('s', [{ ...good, type: '' }], 'any'),
      store.append('s', [good, good], 'any'),
      store.append('s', [{ ...good, data: [] as unknown as EventData['data'] }], 'any'),
    ];
    for (const refusal of await Promise.allSettled(refusals)) expect(refusal.status).to.equal('rejected');
    expect(server.log.all).to.deep.equal([]);
  });

  it('answers an empty append at the stream head with the log head, writing nothing', async () => {
    const first = await store.append('s', [event('A')], 'no_stream');
    await store.append('t', [event('B')], 'no_stream');
    const empty = await store.append('s', [], 0n);
    expect(empty.nextRevision).to.equal(0n);
    expect(empty.position).to.equal(await store.headPosition());
    expect(empty.position > first.position).to.equal(true);
    expect(server.log.all).to.have.length(2);
  });

  it('refuses to open on a server that does not answer', async () => {
    const error = await EsdbEventStore.open({ url: 'esdb://127.0.0.1:1?tls=false' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(Error);
  });
});
