import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import {
  WrongExpectedRevisionError,
  type EventData,
  type EventStore,
  type ExpectedRevision,
  type JsonObject,
  type RecordedEvent,
} from '../../src/infra/eventstore/port.js';

/** A clock the test moves by hand; adapters whose store clock cannot be injected omit it. */
export interface ManualClock {
  now(): number;
  advance(ms: number): void;
}

export interface EventStoreFixture {
  /** A fresh, empty store. */
  store: EventStore;
  /** The store's clock, when the adapter takes one; maxAge tests are skipped without it. */
  clock?: ManualClock;
  cleanup(): Promise<void>;
}

/**
 * The EventStore contract. Uses only the port and asserts what EventStoreDB itself documents
 * (expected revisions, idempotence by event id per stream, $all order, $maxAge), so every
 * adapter, embedded LMDB or EventStoreDB over gRPC, must pass it unchanged.
 */
export function eventStoreContract(adapterName: string, factory: () => Promise<EventStoreFixture>): void {
  describe(`EventStore contract: ${adapterName}`, function () {
    let store: EventStore;
    let clock: ManualClock | undefined;
    let cleanup: (() => Promise<void>) | undefined;

    beforeEach(async () => {
      cleanup = undefined;
      ({ store, clock, cleanup } = await factory());
    });

    afterEach(async () => {
      await cleanup?.();
    });

    describe('append and expected revisions', () => {
      it('numbers a new stream from revision 0n and answers with the last revision and position', async () => {
        const events = [event('A'), event('B'), event('C')];
        const result = await store.append('order-1', events, 'no_stream');
        const read = await store.readStream('order-1');
        expect(read.map((e) => e.revision)).to.deep.equal([0n, 1n, 2n]);
        expect(read.map((e) => e.id)).to.deep.equal(events.map((e) => e.id));
        expect(read.map((e) => e.type)).to.deep.equal(['A', 'B', 'C']);
        expect(read.every((e) => e.streamId === 'order-1')).to.equal(true);
        expect(result.nextRevision).to.equal(2n);
        expect(result.position).to.equal(read[2]?.position);
        expect(typeof result.position).to.equal('bigint');
      });

      it('assigns strictly increasing positions within a batch and across streams', async () => {
        const a = await store.append('a', [event('A1'), event('A2')], 'no_stream');
        const b = await store.append('b', [event('B1')], 'no_stream');
        const c = await store.append('a', [event('A3')], 1n);
        expect(b.position > a.position).to.equal(true);
        expect(c.position > b.position).to.equal(true);
        const all = await store.readAll();
        expect(all.map((e) => e.type)).to.deep.equal(['A1', 'A2', 'B1', 'A3']);
        expectStrictlyIncreasing(all.map((e) => e.position));
        expect(all.at(-1)?.position).to.equal(c.position);
      });

      it('no_stream: succeeds on a missing stream, rejects an existing one with its revision', async () => {
        await store.append('s', [event('A'), event('B')], 'no_stream');
        const error = await rejection(store.append('s', [event('C')], 'no_stream'));
        expectWrongRevision(error, 's', 'no_stream', 1n);
      });

      it('stream_exists: rejects a missing stream with -1n, succeeds on an existing one', async () => {
        const error = await rejection(store.append('s', [event('A')], 'stream_exists'));
        expectWrongRevision(error, 's', 'stream_exists', -1n);
        await store.append('s', [event('A')], 'no_stream');
        const result = await store.append('s', [event('B')], 'stream_exists');
        expect(result.nextRevision).to.equal(1n);
      });

      it('any: succeeds whether or not the stream exists', async () => {
        expect((await store.append('s', [event('A')], 'any')).nextRevision).to.equal(0n);
        expect((await store.append('s', [event('B'), event('C')], 'any')).nextRevision).to.equal(2n);
      });

      it('exact revision: succeeds only at the current head and reports the actual one otherwise', async () => {
        await store.append('s', [event('A'), event('B')], 'no_stream');
        expect((await store.append('s', [event('C')], 1n)).nextRevision).to.equal(2n);
        expectWrongRevision(await rejection(store.append('s', [event('D')], 1n)), 's', 1n, 2n);
        expectWrongRevision(await rejection(store.append('s', [event('D')], 5n)), 's', 5n, 2n);
        expectWrongRevision(await rejection(store.append('missing', [event('D')], 0n)), 'missing', 0n, -1n);
      });

      it('writes nothing when the expected revision does not match', async () => {
        await store.append('s', [event('A')], 'no_stream');
        const head = await store.headPosition();
        await rejection(store.append('s', [event('B'), event('C')], 'no_stream'));
        await rejection(store.append('other', [event('B')], 3n));
        expect((await store.readStream('s')).map((e) => e.type)).to.deep.equal(['A']);
        expect(await store.readStream('other')).to.deep.equal([]);
        expect(await store.headPosition()).to.equal(head);
      });
    });

    describe('idempotent appends by event id', () => {
      it('answers a retry with the same expected revision with the first result and writes nothing', async () => {
        const batch = [event('A'), event('B')];
        const first = await store.append('s', batch, 'no_stream');
        const retry = await store.append('s', batch, 'no_stream');
        expect(retry).to.deep.equal(first);
        expect(await store.readStream('s')).to.have.length(2);
        expect(await store.readAll()).to.have.length(2);
      });

      it('recognises a retry after later appends moved the head past its expected revision', async () => {
        await store.append('s', [event('A')], 'no_stream');
        const batch = [event('B'), event('C')];
        const first = await store.append('s', batch, 0n);
        await store.append('s', [event('D')], 2n);
        const retry = await store.append('s', batch, 0n);
        expect(retry).to.deep.equal(first);
        expect((await store.readStream('s')).map((e) => e.type)).to.deep.equal(['A', 'B', 'C', 'D']);
      });

      it('recognises a retry with expected revision any', async () => {
        const batch = [event('A'), event('B')];
        const first = await store.append('s', batch, 'any');
        await store.append('s', [event('C')], 'any');
        expect(await store.append('s', batch, 'any')).to.deep.equal(first);
        expect((await store.readStream('s')).map((e) => e.type)).to.deep.equal(['A', 'B', 'C']);
      });

      it('rejects a batch of which only some events were written before, and writes none of it', async () => {
        const a = event('A');
        await store.append('s', [a], 'no_stream');
        const error = await rejection(store.append('s', [a, event('B')], 'no_stream'));
        expectWrongRevision(error, 's', 'no_stream', 0n);
        expect((await store.readStream('s')).map((e) => e.type)).to.deep.equal(['A']);
      });

      it('rejects a retry with any of which only some events were written before', async () => {
        const a = event('A');
        await store.append('s', [a], 'any');
        const error = await rejection(store.append('s', [a, event('B')], 'any'));
        expectWrongRevision(error, 's', 'any', 0n);
        expect((await store.readStream('s')).map((e) => e.type)).to.deep.equal(['A']);
      });

      it('rejects new events at a stale expected revision even when retried', async () => {
        await store.append('s', [event('A'), event('B')], 'no_stream');
        expectWrongRevision(await rejection(store.append('s', [event('C')], 0n)), 's', 0n, 1n);
      });

      it('keeps idempotence per stream: the same event id in another stream is a new event there', async () => {
        const shared = event('A');
        const first = await store.append('one', [shared], 'no_stream');
        const second = await store.append('two', [shared], 'no_stream');
        expect(second.position > first.position).to.equal(true);
        const [inTwo] = await store.readStream('two');
        expect(inTwo?.id).to.equal(shared.id);
        expect(inTwo?.streamId).to.equal('two');
        expect(await store.readAll()).to.have.length(2);
      });
    });

    describe('readStream', () => {
      const types = ['E0', 'E1', 'E2', 'E3', 'E4', 'E5'];

      beforeEach(async () => {
        await store.append('s', types.slice(0, 4).map((t) => event(t)), 'no_stream');
        await store.append('noise', [event('N')], 'no_stream');
        await store.append('s', types.slice(4).map((t) => event(t)), 3n);
      });

      it('reads forwards from the start by default, only the stream asked for', async () => {
        const read = await store.readStream('s');
        expect(read.map((e) => e.type)).to.deep.equal(types);
        expectStrictlyIncreasing(read.map((e) => e.position));
      });

      it('reads forwards from an inclusive revision, at most maxCount events', async () => {
        expect(typesOf(await store.readStream('s', { fromRevision: 2n }))).to.deep.equal(['E2', 'E3', 'E4', 'E5']);
        expect(typesOf(await store.readStream('s', { fromRevision: 1n, maxCount: 3 }))).to.deep.equal(['E1', 'E2', 'E3']);
        expect(typesOf(await store.readStream('s', { maxCount: 2 }))).to.deep.equal(['E0', 'E1']);
        expect(await store.readStream('s', { fromRevision: 6n })).to.deep.equal([]);
      });

      it('reads backwards from the end or from an inclusive revision', async () => {
        expect(typesOf(await store.readStream('s', { direction: 'backwards' }))).to.deep.equal([...types].reverse());
        expect(typesOf(await store.readStream('s', { direction: 'backwards', maxCount: 2 }))).to.deep.equal(['E5', 'E4']);
        expect(typesOf(await store.readStream('s', { direction: 'backwards', fromRevision: 3n }))).to.deep.equal(['E3', 'E2', 'E1', 'E0']);
        expect(typesOf(await store.readStream('s', { direction: 'backwards', fromRevision: 4n, maxCount: 2 }))).to.deep.equal(['E4', 'E3']);
      });

      it('reads a missing stream as empty in both directions', async () => {
        expect(await store.readStream('never-written')).to.deep.equal([]);
        expect(await store.readStream('never-written', { direction: 'backwards' })).to.deep.equal([]);
      });
    });

    describe('readAll and headPosition', () => {
      it('has head position -1n and reads nothing while empty', async () => {
        expect(await store.headPosition()).to.equal(-1n);
        expect(await store.readAll()).to.deep.equal([]);
      });

      it('reads the global log in position order after an exclusive position, at most maxCount', async () => {
        const results = [];
        for (let i = 0; i < 5; i++) results.push(await store.append(`s-${i % 2}`, [event(`T${i}`)], 'any'));
        const positions = results.map((r) => r.position);
        expect(await store.headPosition()).to.equal(positions[4]);
        const all = await store.readAll();
        expect(all.map((e) => e.position)).to.deep.equal(positions);
        expect(typesOf(await store.readAll({ after: positions[1] }))).to.deep.equal(['T2', 'T3', 'T4']);
        expect(typesOf(await store.readAll({ after: positions[0], maxCount: 2 }))).to.deep.equal(['T1', 'T2']);
        expect(await store.readAll({ after: positions[4] })).to.deep.equal([]);
      });
    });

    describe('subscribeToAll', () => {
      it('delivers history from the start, then events appended after subscribing', async () => {
        await store.append('a', [event('H1'), event('H2')], 'no_stream');
        await store.append('b', [event('H3')], 'no_stream');
        const subscription = store.subscribeToAll();
        try {
          const iterator = subscription[Symbol.asyncIterator]();
          expect(typesOf(await take(iterator, 3))).to.deep.equal(['H1', 'H2', 'H3']);
          const pending = take(iterator, 2);
          await store.append('a', [event('L1')], 1n);
          await store.append('c', [event('L2')], 'no_stream');
          const live = await pending;
          expect(typesOf(live)).to.deep.equal(['L1', 'L2']);
          expect(live[1]?.streamId).to.equal('c');
        } finally {
          await subscription.unsubscribe();
        }
      });

      it('starts after an exclusive checkpoint', async () => {
        const first = await store.append('a', [event('A'), event('B')], 'no_stream');
        await store.append('b', [event('C')], 'no_stream');
        const subscription = store.subscribeToAll({ after: first.position });
        try {
          expect(typesOf(await take(subscription[Symbol.asyncIterator](), 1))).to.deep.equal(['C']);
        } finally {
          await subscription.unsubscribe();
        }
      });

      it('catches up through a long history and appends racing with it, each event exactly once in order', async () => {
        for (let i = 0; i < 12; i++) await store.append(`s-${i % 3}`, Array.from({ length: 100 }, () => event('H')), 'any');
        const subscription = store.subscribeToAll();
        try {
          const iterator = subscription[Symbol.asyncIterator]();
          const reading = take(iterator, 1250);
          for (let i = 0; i < 50; i++) await store.append('racing', [event('R')], 'any');
          const received = await reading;
          expect(received.filter((e) => e.type === 'R')).to.have.length(50);
          expectStrictlyIncreasing(received.map((e) => e.position));
          expect(received.map((e) => e.position)).to.deep.equal((await store.readAll()).map((e) => e.position));
        } finally {
          await subscription.unsubscribe();
        }
      });

      it('ends iteration on unsubscribe, resolving a pending next() with done', async () => {
        await store.append('a', [event('A')], 'no_stream');
        const subscription = store.subscribeToAll();
        const iterator = subscription[Symbol.asyncIterator]();
        expect(typesOf(await take(iterator, 1))).to.deep.equal(['A']);
        const pending = iterator.next();
        await subscription.unsubscribe();
        expect((await within(2000, pending, 'pending next() after unsubscribe')).done).to.equal(true);
        expect((await within(2000, iterator.next(), 'next() after unsubscribe')).done).to.equal(true);
      });

      it('hands out batches: one event waited for, then those at hand, up to the limit, sharing order with next()', async () => {
        await store.append('a', [event('A'), event('B'), event('C')], 'no_stream');
        await store.append('b', [event('D'), event('E')], 'no_stream');
        const subscription = store.subscribeToAll();
        try {
          const iterator = subscription[Symbol.asyncIterator]();
          expect(typesOf(await subscription.nextBatch(2))).to.deep.equal(['A', 'B']);
          expect(typesOf(await take(iterator, 1))).to.deep.equal(['C']);
          expect(typesOf(await subscription.nextBatch(10))).to.deep.equal(['D', 'E']);
          const pending = subscription.nextBatch(10);
          await store.append('a', [event('L1'), event('L2')], 2n);
          const live = await within(2000, pending, 'a batch once events arrive');
          expect(live.length).to.be.at.least(1);
          const rest = live.length < 2 ? await subscription.nextBatch(10) : [];
          expect(typesOf([...live, ...rest])).to.deep.equal(['L1', 'L2']);
          const waiting = subscription.nextBatch(10);
          await subscription.unsubscribe();
          expect(await within(2000, waiting, 'pending nextBatch() after unsubscribe')).to.deep.equal([]);
        } finally {
          await subscription.unsubscribe();
        }
      });

      it('ends a for-await loop that breaks out, and delivers nothing more', async () => {
        await store.append('a', [event('A'), event('B')], 'no_stream');
        const subscription = store.subscribeToAll();
        const seen: string[] = [];
        for await (const recorded of subscription) {
          seen.push(recorded.type);
          if (seen.length === 1) break;
        }
        expect(seen).to.deep.equal(['A']);
        const after = await within(2000, subscription[Symbol.asyncIterator]().next(), 'next() after break');
        expect(after.done).to.equal(true);
      });
    });

    describe('stream metadata and maxAge', () => {
      it('reads no metadata for an unknown stream, then what was set, and clears it', async () => {
        expect(await store.getStreamMetadata('s')).to.deep.equal({});
        await store.setStreamMetadata('s', { maxAgeSeconds: 3600 });
        expect(await store.getStreamMetadata('s')).to.deep.equal({ maxAgeSeconds: 3600 });
        await store.setStreamMetadata('s', {});
        expect(await store.getStreamMetadata('s')).to.deep.equal({});
      });

      it('hides events older than maxAge from stream reads in both directions, keeping revisions going', async function () {
        if (!clock) this.skip();
        const manual = clock as ManualClock;
        await store.append('s', [event('old')], 'no_stream');
        manual.advance(30_000);
        await store.append('s', [event('mid')], 0n);
        manual.advance(20_000);
        await store.append('s', [event('new')], 1n);
        await store.append('kept', [event('K')], 'no_stream');
        await store.setStreamMetadata('s', { maxAgeSeconds: 60 });
        expect(typesOf(await store.readStream('s'))).to.deep.equal(['old', 'mid', 'new']);

        manual.advance(15_000); // old is 65 s old, mid 35 s, new 15 s
        expect(typesOf(await store.readStream('s'))).to.deep.equal(['mid', 'new']);
        expect(typesOf(await store.readStream('s', { direction: 'backwards' }))).to.deep.equal(['new', 'mid']);
        expect(typesOf(await store.readStream('s', { maxCount: 1 }))).to.deep.equal(['mid']);

        manual.advance(60_000);
        expect(await store.readStream('s')).to.deep.equal([]);
        expect(typesOf(await store.readStream('kept'))).to.deep.equal(['K']);
        // The stream still exists at its old head: expiry is not deletion of the revision count.
        expectWrongRevision(await rejection(store.append('s', [event('x')], 'no_stream')), 's', 'no_stream', 2n);
        const next = await store.append('s', [event('newest')], 2n);
        expect(next.nextRevision).to.equal(3n);
        expect(typesOf(await store.readStream('s'))).to.deep.equal(['newest']);
      });

      it('stamps created with the store clock', async function () {
        if (!clock) this.skip();
        const at = (clock as ManualClock).now();
        await store.append('s', [event('A')], 'no_stream');
        const [read] = await store.readStream('s');
        expect(read?.created.getTime()).to.equal(at);
      });
    });

    describe('event content', () => {
      const data: JsonObject = {
        text: 'olá, 世界 👋🏽 — ‏שלום‏ e\u0301 \u0000 "quoted" \\ back',
        emptyString: '',
        number: -12.5,
        integer: 9007199254740991,
        flags: [true, false, null],
        nested: { deeper: { list: [1, 'two', { three: [3] }], emptyObject: {}, emptyList: [] } },
        'key with spaces.and.dots': 'ok',
        $dollar: 'ok',
      };
      const metadata: JsonObject = { correlationId: 'c-ü', actor: { kind: 'network', id: '📱' }, tags: ['α', 'β'] };

      it('round-trips data and metadata through readStream, readAll and subscriptions', async () => {
        const written = { id: randomUUID(), type: 'MessageReceived', data, metadata };
        await store.append('s', [written], 'no_stream');
        const [fromStream] = await store.readStream('s');
        const [fromAll] = await store.readAll();
        const subscription = store.subscribeToAll();
        const [fromSubscription] = await take(subscription[Symbol.asyncIterator](), 1).finally(() => subscription.unsubscribe());
        for (const read of [fromStream, fromAll, fromSubscription]) {
          expect(read?.id).to.equal(written.id);
          expect(read?.type).to.equal('MessageReceived');
          expect(read?.data).to.deep.equal(data);
          expect(read?.metadata).to.deep.equal(metadata);
          expect(read?.created).to.be.instanceOf(Date);
          expect(Number.isNaN(read?.created.getTime())).to.equal(false);
        }
      });

      it('stores a snapshot: changing the appended objects or a read result changes nothing stored', async () => {
        const written = { id: randomUUID(), type: 'T', data: { list: [1] as number[] }, metadata: { m: { v: 1 } } };
        await store.append('s', [written], 'no_stream');
        written.data.list.push(2);
        written.metadata.m.v = 2;
        const [first] = await store.readStream('s');
        (first?.data.list as number[]).push(3);
        const [second] = await store.readStream('s');
        expect(second?.data).to.deep.equal({ list: [1] });
        expect(second?.metadata).to.deep.equal({ m: { v: 1 } });
      });
    });

    describe('concurrency', () => {
      it('lets exactly one of many concurrent appends at the same exact revision win', async () => {
        await store.append('s', [event('base')], 'no_stream');
        const attempts = Array.from({ length: 20 }, (_, i) => store.append('s', [event(`try-${i}`)], 0n));
        const settled = await Promise.allSettled(attempts);
        const won = settled.filter((s) => s.status === 'fulfilled');
        const lost = settled.filter((s): s is PromiseRejectedResult => s.status === 'rejected');
        expect(won).to.have.length(1);
        for (const { reason } of lost) expectWrongRevision(reason, 's', 0n, 1n);
        const read = await store.readStream('s');
        expect(read).to.have.length(2);
        expect(read[1]?.revision).to.equal(1n);
      });

      it('lets exactly one of many concurrent no_stream appends create the stream', async () => {
        const settled = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => store.append('s', [event(`try-${i}`)], 'no_stream')));
        expect(settled.filter((s) => s.status === 'fulfilled')).to.have.length(1);
        expect(await store.readStream('s')).to.have.length(1);
      });

      it('never shows a stream with a gap or a repeat while appends keep landing', async () => {
        const streams = ['c0', 'c1', 'c2'];
        let writing = true;
        const writers = Array.from({ length: 12 }, async (_, w) => {
          for (let i = 0; i < 25; i++) await store.append(streams[(w + i) % streams.length] as string, [event(`W${w}`)], 'any');
        });
        const reader = (async () => {
          let reads = 0;
          while (writing || reads === 0) {
            for (const stream of streams) {
              const forwards = await store.readStream(stream);
              expect(forwards.map((e) => e.revision)).to.deep.equal(forwards.map((_, i) => BigInt(i)));
              const backwards = await store.readStream(stream, { direction: 'backwards' });
              const n = backwards.length;
              expect(backwards.map((e) => e.revision)).to.deep.equal(backwards.map((_, i) => BigInt(n - 1 - i)));
              reads++;
            }
            // Reads may resolve without I/O; yield so the appends' commits get their turn.
            await new Promise((resolveTick) => setImmediate(resolveTick));
          }
        })();
        await Promise.all(writers).finally(() => (writing = false));
        await reader;
        const total = await Promise.all(streams.map(async (stream) => (await store.readStream(stream)).length));
        expect(total.reduce((a, b) => a + b)).to.equal(12 * 25);
      });

      it('accepts many concurrent appends to different streams, each at its own distinct position', async () => {
        const n = 200;
        const results = await Promise.all(Array.from({ length: n }, (_, i) => store.append(`s-${i}`, [event(`E${i}`)], 'no_stream')));
        const positions = results.map((r) => r.position);
        expect(new Set(positions).size).to.equal(n);
        const all = await store.readAll();
        expect(all).to.have.length(n);
        expectStrictlyIncreasing(all.map((e) => e.position));
        for (let i = 0; i < n; i++) {
          const [read] = await store.readStream(`s-${i}`);
          expect(read?.type).to.equal(`E${i}`);
          expect(read?.position).to.equal(positions[i]);
          expect(read?.revision).to.equal(0n);
        }
      });
    });
  });
}

function event(type: string, data: JsonObject = {}): EventData {
  return { id: randomUUID(), type, data, metadata: {} };
}

function typesOf(events: RecordedEvent[]): string[] {
  return events.map((e) => e.type);
}

function expectStrictlyIncreasing(positions: bigint[]): void {
  for (let i = 1; i < positions.length; i++) {
    expect((positions[i] as bigint) > (positions[i - 1] as bigint), `position ${i} after ${i - 1}`).to.equal(true);
  }
}

function expectWrongRevision(error: unknown, streamId: string, expected: ExpectedRevision, actual: bigint): void {
  expect(error).to.be.instanceOf(WrongExpectedRevisionError);
  const wrong = error as WrongExpectedRevisionError;
  expect(wrong.streamId).to.equal(streamId);
  expect(wrong.expected).to.equal(expected);
  expect(wrong.actual).to.equal(actual);
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}

/** Fails fast instead of hanging until mocha's timeout when an iterator never yields. */
async function within<T>(ms: number, promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function take(iterator: AsyncIterator<RecordedEvent>, count: number): Promise<RecordedEvent[]> {
  const events: RecordedEvent[] = [];
  while (events.length < count) {
    const next = await within(5000, iterator.next(), `event ${events.length + 1} of ${count}`);
    if (next.done) throw new Error(`subscription ended after ${events.length} of ${count} events`);
    events.push(next.value);
  }
  return events;
}
