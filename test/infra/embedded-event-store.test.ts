import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { open, type Database } from 'lmdb';
import { EmbeddedEventStore, type EmbeddedEventStoreOptions } from '../../src/infra/eventstore/embedded/embedded-event-store.js';
import { openLogReader } from '../../src/infra/eventstore/embedded/log-reader.js';
import type { EventData, RecordedEvent } from '../../src/infra/eventstore/port.js';
import { eventStoreContract, type ManualClock } from '../contract/event-store.contract.js';
import type { AckLine } from '../fixtures/event-store-crash-writer.js';

const CRASH_WRITER = resolve(fileURLToPath(import.meta.url), '../../fixtures/event-store-crash-writer.ts');

function manualClock(start = Date.parse('2024-05-01T10:00:00.000Z')): ManualClock {
  let at = start;
  return { now: () => at, advance: (ms) => void (at += ms) };
}

/** lmdb takes a path with a dot for a file, so these names have none. */
async function tempDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'eventstore-'));
}

function embeddedFixture(options: Partial<EmbeddedEventStoreOptions> = {}) {
  return async () => {
    const dir = await tempDir();
    const clock = manualClock();
    const store = await EmbeddedEventStore.open({ path: dir, now: clock.now, ...options });
    return {
      store,
      clock,
      async cleanup() {
        await store.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  };
}

eventStoreContract('embedded', embeddedFixture());
// Normally most of a short test's events are still in memory, waiting to be indexed in bulk;
// indexing after every append puts the on-disk stream index, and the hand-over, under the suite.
eventStoreContract('embedded, indexing after every append', embeddedFixture({ indexBatch: 1 }));

function event(type: string, data: EventData['data'] = {}): EventData {
  return { id: randomUUID(), type, data, metadata: {} };
}

function ids(events: RecordedEvent[]): string[] {
  return events.map((e) => e.id);
}

describe('EmbeddedEventStore', () => {
  let dir: string;
  let clock: ManualClock;
  let store: EmbeddedEventStore | undefined;

  beforeEach(async () => {
    dir = await tempDir();
    clock = manualClock();
  });

  afterEach(async () => {
    await store?.close();
    store = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  async function openStore(options: Partial<EmbeddedEventStoreOptions> = {}): Promise<EmbeddedEventStore> {
    await store?.close();
    store = await EmbeddedEventStore.open({ path: dir, now: clock.now, ...options });
    return store;
  }

  it('keeps events, revisions, positions and metadata across a reopen', async () => {
    let s = await openStore();
    await s.append('a', [event('A0'), event('A1', { text: 'ünï 👋', n: [1, { x: null }] })], 'no_stream');
    await s.append('b', [event('B0')], 'no_stream');
    await s.append('a', [event('A2')], 1n);
    await s.setStreamMetadata('b', { maxAgeSeconds: 600 });
    const before = { all: await s.readAll(), a: await s.readStream('a'), head: await s.headPosition() };

    s = await openStore();
    expect(await s.readAll()).to.deep.equal(before.all);
    expect(await s.readStream('a')).to.deep.equal(before.a);
    expect(await s.readStream('a', { direction: 'backwards', maxCount: 2 })).to.deep.equal(before.a.slice(1).reverse());
    expect(await s.headPosition()).to.equal(before.head);
    expect(await s.getStreamMetadata('b')).to.deep.equal({ maxAgeSeconds: 600 });
    const next = await s.append('a', [event('A3')], 2n);
    expect(next).to.deep.equal({ nextRevision: 3n, position: before.head + 1n });
    const error = await s.append('b', [event('B1')], 'no_stream').catch((e: unknown) => e);
    expect(error).to.have.property('actual', 0n);
  });

  it('recognises retries across a reopen, at an exact revision and with any', async () => {
    let s = await openStore();
    const exact = [event('E0'), event('E1')];
    const loose = [event('L0')];
    const exactResult = await s.append('exact', exact, 'no_stream');
    const looseResult = await s.append('loose', loose, 'any');
    s = await openStore();
    expect(await s.append('exact', exact, 'no_stream')).to.deep.equal(exactResult);
    expect(await s.append('loose', loose, 'any')).to.deep.equal(looseResult);
    expect(await s.readAll()).to.have.length(3);
  });

  it('reads streams exactly like a model across index hand-overs and reopens', async () => {
    // A tiny index batch moves revisions between memory and the on-disk index all the time.
    let s = await openStore({ indexBatch: 3 });
    let seed = 11;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return (seed >>> 16) % n;
    };
    const model = new Map<string, string[]>();
    const streams = ['s0', 's1', 's2', 's3', 's4'];
    for (let step = 0; step < 240; step++) {
      const stream = streams[random(streams.length)] as string;
      const known = model.get(stream) ?? [];
      const batch = Array.from({ length: 1 + random(3) }, () => event('M'));
      await s.append(stream, batch, known.length === 0 ? 'no_stream' : BigInt(known.length - 1));
      model.set(stream, [...known, ...batch.map((e) => e.id)]);
      if (step % 80 === 79) s = await openStore({ indexBatch: 3 });
      if (step % 7 === 0) await new Promise((resolveTick) => setImmediate(resolveTick));

      const target = streams[random(streams.length)] as string;
      const expected = model.get(target) ?? [];
      const forwards = random(2) === 0;
      const fromRevision = random(4) === 0 ? undefined : random(expected.length + 2);
      const maxCount = random(3) === 0 ? undefined : 1 + random(6);
      const read = await s.readStream(target, {
        direction: forwards ? 'forwards' : 'backwards',
        fromRevision: fromRevision === undefined ? undefined : BigInt(fromRevision),
        maxCount,
      });
      let slice: string[];
      if (forwards) slice = expected.slice(fromRevision ?? 0);
      else slice = expected.slice(0, Math.min(fromRevision ?? Infinity, expected.length - 1) + 1).reverse();
      if (maxCount !== undefined) slice = slice.slice(0, maxCount);
      const query = JSON.stringify({ step, target, forwards, fromRevision, maxCount });
      expect(ids(read), query).to.deep.equal(slice);
      const revisions = read.map((e) => Number(e.revision));
      const start = forwards ? (fromRevision ?? 0) : Math.min(fromRevision ?? Infinity, expected.length - 1);
      expect(revisions, query).to.deep.equal(revisions.map((_, i) => (forwards ? start + i : start - i)));
    }
  });

  it('scavenges: physically deletes expired events, counts them, and leaves everything else', async () => {
    const s = await openStore();
    await s.setStreamMetadata('session-1', { maxAgeSeconds: 60 });
    await s.setStreamMetadata('session-2', { maxAgeSeconds: 3600 });
    await s.append('session-1', [event('old0'), event('old1')], 'no_stream');
    await s.append('account-1', [event('kept-account')], 'no_stream');
    await s.append('session-2', [event('kept-long-retention')], 'no_stream');
    clock.advance(50_000);
    await s.append('session-1', [event('young')], 1n);
    clock.advance(30_000); // old0 and old1 are 80 s old, young 30 s
    // readAll ignores maxAge: until scavenged, expired events are still there.
    expect((await s.readAll()).map((e) => e.type)).to.include.members(['old0', 'old1']);

    expect(await s.scavenge()).to.equal(2);
    const remaining = ['kept-account', 'kept-long-retention', 'young'];
    expect((await s.readAll()).map((e) => e.type)).to.deep.equal(remaining);
    // Subscribers read the newest entries from memory: what was deleted is gone there too.
    const subscription = s.subscribeToAll();
    const seen: string[] = [];
    for await (const e of subscription) {
      seen.push(e.type);
      if (seen.length === remaining.length) break;
    }
    expect(seen).to.deep.equal(remaining);
    expect(await s.scavenge()).to.equal(0);
    const [young] = await s.readStream('session-1');
    expect(young?.revision).to.equal(2n);
    expect((await s.append('session-1', [event('next')], 2n)).nextRevision).to.equal(3n);

    const reopened = await openStore();
    expect((await reopened.readAll()).map((e) => e.type)).to.deep.equal([...remaining, 'next']);
    expect((await reopened.readStream('session-1', { direction: 'backwards' })).map((e) => e.type)).to.deep.equal(['next', 'young']);
  });

  it('opens a store written by the version that indexed in the append transaction', async () => {
    const created = clock.now();
    const [a, b] = [event('A'), event('B')];
    const legacy = open({ path: dir, maxDbs: 8 });
    const log = legacy.openDB<object, number>({ name: 'log' });
    const streamIndex = legacy.openDB<number, [string, number]>({ name: 'streams' });
    const heads = legacy.openDB<number, string>({ name: 'heads' });
    const idIndex = legacy.openDB<object, string>({ name: 'ids' });
    const state = legacy.openDB<number, string>({ name: 'state' });
    await legacy.transaction(() => {
      [a, b].forEach((e, revision) => {
        log.putSync(revision, { ...e, streamId: 's', revision, created });
        streamIndex.putSync(['s', revision], revision);
        idIndex.putSync(e.id, { streamId: 's', revision, position: revision });
      });
      heads.putSync('s', 1);
      state.putSync('lastPosition', 1);
    });
    await legacy.close();

    const s = await openStore();
    expect(ids(await s.readStream('s'))).to.deep.equal([a.id, b.id]);
    expect(await s.append('s', [a, b], 'no_stream')).to.deep.equal({ nextRevision: 1n, position: 1n });
    expect(await s.append('s', [event('C')], 1n)).to.deep.equal({ nextRevision: 2n, position: 2n });
    await s.close();
    store = undefined;

    const after = open({ path: dir, maxDbs: 8 });
    const existingOnly = { name: 'ids', create: false };
    let dropped: Database<unknown, string> | undefined;
    try {
      dropped = after.openDB<unknown, string>(existingOnly);
    } catch {
      dropped = undefined;
    }
    await after.close();
    expect(dropped, 'the legacy event-id index').to.equal(undefined);
  });

  it('stores events by shared shape, and still reads the events a version before it stored with their field names', async () => {
    const created = clock.now();
    const old = event('Old', { text: 'before', nested: { a: 1 } });
    const legacy = open({ path: dir, maxDbs: 8 });
    const legacyLog = legacy.openDB<object, number>({ name: 'log' });
    await legacy.transaction(() => {
      legacyLog.putSync(0, { ...old, streamId: 's', revision: 0, created });
      legacy.openDB<number, [string, number]>({ name: 'streams' }).putSync(['s', 0], 0);
      legacy.openDB<number, string>({ name: 'heads' }).putSync('s', 0);
      legacy.openDB<number, string>({ name: 'state' }).putSync('lastPosition', 0);
    });
    await legacy.close();

    const s = await openStore();
    const same = event('Old', { text: 'after', nested: { a: 2 } });
    const fresh = event('New', { other: true, list: [{ b: 'x' }] });
    await s.append('s', [same, fresh], 0n);
    const all = await s.readAll();
    expect(all.map((e) => e.data)).to.deep.equal([old.data, same.data, fresh.data]);

    // A second reader of the log, as a rebuild thread opens one once the events it reads are stored.
    const later = event('Later', { shape: 'unseen', n: 3 });
    await s.append('s', [later], 2n);
    const reader = openLogReader(dir);
    try {
      expect((await reader.readAll({ upTo: 3n })).map((e) => e.data)).to.deep.equal([old.data, same.data, fresh.data, later.data]);
    } finally {
      await reader.close();
    }

    await s.close();
    store = undefined;
    const raw = open({ path: dir, maxDbs: 8, readOnly: true });
    try {
      const bytes = raw.openDB<object, number>({ name: 'log' }).getBinary(1);
      // An event that spells its field names out starts with a record definition (msgpack ext 0x72).
      expect(bytes?.subarray(0, 2).toString('hex'), 'the new event names its shape by number').to.not.equal('d472');
      expect(raw.openDB<object, number>({ name: 'log' }).getBinary(0)?.subarray(0, 2).toString('hex'), 'the legacy event').to.equal('d472');
    } finally {
      await raw.close();
    }
    expect((await (await openStore()).readAll()).map((e) => e.data)).to.deep.equal([old.data, same.data, fresh.data, later.data]);
  });

  it('leaves nothing of an append that failed after queuing some of its events, in memory or on disk', async () => {
    const s = await openStore();
    await s.append('s', [event('First', { a: 1 })], 'no_stream');
    // Fault injection: encoding the append's second event fails (only lmdb failing would make it)
    // after its first event was queued.
    const { storage } = Reflect.get(s, 'context') as { storage: { log: { put: (...args: unknown[]) => unknown } } };
    const put = storage.log.put;
    storage.log.put = (...args: unknown[]) => {
      if ((args[1] as { type?: string }).type?.startsWith('Bad')) throw new Error('injected');
      return Reflect.apply(put, storage.log, args);
    };
    try {
      const failed = await s.append('s', [event('Lost', { p: 1, q: 2 }), event('Bad')], 0n).catch((err: unknown) => err);
      expect(String(failed)).to.match(/injected/);
      expect(await s.readStream('s')).to.have.length(1);
      expect(await s.append('s', [event('Kept', { p: 3, q: 4 })], 0n)).to.deep.equal({ nextRevision: 1n, position: 1n });
      expect((await s.readAll()).map((e) => e.type)).to.deep.equal(['First', 'Kept']);
      // Failing again and closing at once: what was queued of it must not be on disk.
      expect(String(await s.append('s', [event('Lost2', { m: 'x' }), event('Bad')], 1n).catch((err: unknown) => err))).to.match(/injected/);
    } finally {
      storage.log.put = put;
    }
    const reopened = await openStore();
    expect((await reopened.readAll()).map((e) => e.type)).to.deep.equal(['First', 'Kept']);
    expect(await reopened.headPosition()).to.equal(1n);
    expect(await reopened.append('s', [event('Later', { m: 'x', n: 'y' })], 1n)).to.deep.equal({ nextRevision: 2n, position: 2n });
    const again = await openStore();
    expect((await again.readStream('s')).map((e) => e.data)).to.deep.equal([{ a: 1 }, { p: 3, q: 4 }, { m: 'x', n: 'y' }]);
  });

  it('never reuses the position of an event scavenged from the end of the log, across a reopen', async () => {
    const s = await openStore();
    await s.append('kept', [event('K')], 'no_stream');
    await s.setStreamMetadata('old', { maxAgeSeconds: 60 });
    const last = await s.append('old', [event('O0'), event('O1')], 'no_stream');
    clock.advance(120_000);
    expect(await s.scavenge()).to.equal(2);
    const reopened = await openStore();
    expect((await reopened.append('kept', [event('K1')], 0n)).position).to.equal(last.position + 1n);
  });

  it('recognises a retry made before the original is acknowledged, at an exact revision and with any', async () => {
    const s = await openStore();
    const exact = [event('E0'), event('E1')];
    const loose = [event('L0')];
    // Neither original is committed when its retry is checked: all four are made in one turn.
    const results = await Promise.all([
      s.append('exact', exact, 'no_stream'),
      s.append('loose', loose, 'any'),
      s.append('exact', exact, 'no_stream'),
      s.append('loose', loose, 'any'),
    ]);
    expect(results[2]).to.deep.equal(results[0]);
    expect(results[3]).to.deep.equal(results[1]);
    expect((await s.readAll()).map((e) => e.type)).to.deep.equal(['E0', 'E1', 'L0']);
  });

  it('acknowledges an append, and shows it to readers, only once lmdb has flushed its commit', async () => {
    const s = await openStore();
    // lmdb's overlappingSync resolves a commit before its fsync; `flushed` is the fsync. Hold it.
    const env = (Reflect.get(s, 'storage') as { env: object }).env;
    let release!: () => void;
    const flush = new Promise<void>((resolveFlush) => (release = resolveFlush));
    let asked!: () => void;
    const flushAsked = new Promise<void>((resolveAsked) => (asked = resolveAsked));
    Object.defineProperty(env, 'flushed', {
      configurable: true,
      get: () => {
        asked();
        return flush.then(() => true);
      },
    });
    try {
      let acknowledged = false;
      const appended = s.append('s', [event('A')], 'no_stream').then((result) => {
        acknowledged = true;
        return result;
      });
      // The commit is done once the store asks for the flush (or, wrongly, has acknowledged already).
      await Promise.race([flushAsked, appended]);
      await new Promise((resolveTurn) => setImmediate(resolveTurn));
      expect(acknowledged, 'acknowledged before the flush').to.equal(false);
      expect(await s.headPosition()).to.equal(-1n);
      expect(await s.readAll()).to.deep.equal([]);
      release();
      expect(await appended).to.deep.equal({ nextRevision: 0n, position: 0n });
      expect(await s.headPosition()).to.equal(0n);
    } finally {
      release();
      Reflect.deleteProperty(env, 'flushed');
    }
  });

  it('rejects malformed input before writing anything', async () => {
    const s = await openStore();
    const bad: Array<[string, EventData[]]> = [
      ['', [event('A')]],
      ['s', [{ ...event('A'), id: '' }]],
      ['s', [{ ...event('A'), type: '' }]],
      ['s', [{ ...event('A'), data: [] as unknown as EventData['data'] }]],
      ['s', (() => { const e = event('A'); return [e, { ...event('B'), id: e.id }]; })()],
    ];
    for (const [streamId, events] of bad) {
      const error = await s.append(streamId, events, 'any').catch((e: unknown) => e);
      expect(error, JSON.stringify(events)).to.be.instanceOf(Error);
    }
    expect(await s.readAll()).to.deep.equal([]);
    expect(await s.readStream('s', { maxCount: -1 }).catch((e: unknown) => e)).to.be.instanceOf(Error);
  });

  describe('crash safety', function () {
    this.timeout(60_000);

    it('keeps every acknowledged append through SIGKILL mid-burst, twice, and appends afterwards', async () => {
      const acked: AckLine[] = [];
      for (let round = 1; round <= 2; round++) {
        const { lines, signal } = await runUntilKilled(dir, 3000);
        expect(signal, `round ${round}: the writer must die by the kill, mid-burst`).to.equal('SIGKILL');
        acked.push(...lines);

        const s = await openStore();
        await verifyLog(s, acked);
        const head = await s.headPosition();
        const [last] = await s.readStream('crash-0-0', { direction: 'backwards', maxCount: 1 });
        const revision = last?.revision ?? -1n;
        const continued = await s.append('crash-0-0', [event('after-crash')], revision < 0n ? 'no_stream' : revision);
        expect(continued).to.deep.equal({ nextRevision: revision + 1n, position: head + 1n });
        const fresh = await s.append(`after-crash-${round}`, [event('after-crash')], 'no_stream');
        expect(fresh.position).to.equal(head + 2n);
        await s.close();
        store = undefined;
      }
    });
  });
});

/** Runs the crash writer until it has printed `acks` lines, then SIGKILLs it. */
async function runUntilKilled(dir: string, acks: number): Promise<{ lines: AckLine[]; signal: NodeJS.Signals | null }> {
  const child = spawn(process.execPath, ['--import', 'tsx', CRASH_WRITER, dir, '50'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: AckLine[] = [];
  let pending = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    const parts = (pending + chunk).split('\n');
    pending = parts.pop() ?? ''; // a line cut by the kill was never complete, so never promised
    for (const part of parts) lines.push(JSON.parse(part) as AckLine);
    if (lines.length >= acks && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const giveUp = setTimeout(() => child.kill('SIGKILL'), 45_000);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((done) => child.on('close', (c, s) => done([c, s])));
  clearTimeout(giveUp);
  if (lines.length < acks) throw new Error(`crash writer ended (code ${code}, signal ${signal}) after ${lines.length} acks:\n${stderr}`);
  return { lines, signal };
}

/** Everything acknowledged is there, unchanged, and the log and stream index agree throughout. */
async function verifyLog(store: EmbeddedEventStore, acked: AckLine[]): Promise<void> {
  const all = await store.readAll();
  expect(all.length).to.be.at.least(acked.length);
  const byStream = new Map<string, RecordedEvent[]>();
  for (let i = 0; i < all.length; i++) {
    const e = all[i] as RecordedEvent;
    if (i > 0) expect(e.position > (all[i - 1] as RecordedEvent).position, `position at ${i}`).to.equal(true);
    const events = byStream.get(e.streamId) ?? [];
    expect(e.revision, `${e.streamId} revisions are contiguous from 0`).to.equal(BigInt(events.length));
    events.push(e);
    byStream.set(e.streamId, events);
  }
  expect(await store.headPosition()).to.equal(all.at(-1)?.position);
  for (const [streamId, events] of byStream) {
    const read = await store.readStream(streamId);
    expect(read.map((e) => [e.id, e.revision, e.position]), streamId).to.deep.equal(events.map((e) => [e.id, e.revision, e.position]));
  }
  for (const ack of acked) {
    const e = byStream.get(ack.s)?.[Number(ack.r)];
    expect(e, `acknowledged ${ack.s}@${ack.r}`).to.not.equal(undefined);
    expect({ id: e?.id, position: e?.position, data: e?.data }).to.deep.equal({ id: ack.id, position: BigInt(ack.p), data: ack.d });
  }
}
