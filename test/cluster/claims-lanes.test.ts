import { expect } from 'chai';
import { Leases } from '../../src/cluster/leases.js';
import { systemClock } from '../../src/infra/clock.js';
import type { DocumentStore } from '../../src/infra/docstore/port.js';
import { MongoDocumentStore } from '../../src/infra/docstore/mongodb/mongodb-document-store.js';
import { createLogger } from '../../src/infra/logging/logger.js';
import { LaneLeases } from '../../src/webhooks/dispatch/lane-claims.js';
import { Scheduler, type Stub } from '../../src/webhooks/dispatch/scheduler.js';
import type { DeliveryDoc } from '../../src/webhooks/deliveries/documents.js';
import { freshDatabase, testServerTarget, type MongoTarget } from '../servers/mongodb/targets.js';
import { waitFor } from '../support/sandbox.js';

const TTL = 1200;

/** Webhook lanes claimed by lease on a shared MongoDB: one feeder per instance, handed over only after the first let go. */
describe('webhook lane claims across two nodes', function () {
  this.timeout(30_000);
  let server: MongoTarget;
  let url: string;
  const stores: DocumentStore[] = [];
  const lanes: LaneLeases[] = [];

  before(async () => (server = await testServerTarget()));
  after(async () => server?.stop());
  beforeEach(() => (url = server.url(freshDatabase('lanes'))));
  afterEach(async () => {
    for (const l of lanes.splice(0)) await l.stop().catch(() => undefined);
    for (const s of stores.splice(0)) await s.close().catch(() => undefined);
  });

  /** A node: its own connection to the database, its own lease holder id, a log of what it gained and lost. */
  async function node(name: string, instances: string[]) {
    const store = await MongoDocumentStore.open({ url });
    stores.push(store);
    const log: { what: 'gained' | 'lost'; id: string; at: number }[] = [];
    const claims = new LaneLeases({
      leases: new Leases(store, name, systemClock),
      instances: async () => instances,
      clock: systemClock,
      logger: createLogger('silent'),
      ttlMs: TTL,
      stop: new AbortController().signal,
      gained: (id) => log.push({ what: 'gained', id, at: Date.now() }),
      lost: (id) => log.push({ what: 'lost', id, at: Date.now() }),
    });
    lanes.push(claims);
    return { store, claims, log };
  }

  it('gives each lane to one node, and moves it when that node dies, only after it stopped attempting', async () => {
    const ids = ['i1', 'i2', 'i3'];
    const a = await node('node-a', ids);
    await a.claims.start();
    const b = await node('node-b', ids);
    await b.claims.start();
    expect(ids.map((id) => [a.claims.owns(id), b.claims.owns(id)])).to.deep.equal(ids.map(() => [true, false]));
    expect(a.claims.attemptSignal('i1')?.aborted).to.equal(false);
    expect(b.claims.attemptSignal('i1')).to.equal(null);

    // Node A loses the database: it cannot renew, so it lets go a margin before its leases lapse.
    const signal = a.claims.attemptSignal('i1') as AbortSignal;
    await a.store.close();
    await waitFor(() => ids.every((id) => b.claims.owns(id)), 'node B owns every lane', 10 * TTL);
    expect(signal.aborted, 'attempts under the lapsed claim aborted').to.equal(true);
    for (const id of ids) {
      const lost = a.log.find((e) => e.id === id && e.what === 'lost');
      const gained = b.log.find((e) => e.id === id && e.what === 'gained');
      expect(lost, `A let ${id} go`).to.not.equal(undefined);
      expect(lost!.at, `A let ${id} go before B took it`).to.be.below(gained!.at);
      expect(a.claims.owns(id)).to.equal(false);
    }
  });

  it('releases its lanes on a clean stop, so another node takes them at its next round', async () => {
    const a = await node('node-a', ['i1']);
    await a.claims.start();
    const b = await node('node-b', ['i1']);
    await b.claims.start();
    expect(b.claims.owns('i1')).to.equal(false);
    const stoppedAt = Date.now();
    await a.claims.stop();
    // The event that matters: the stop gave the lease back (B may have taken it already).
    // Without the release A's lease would still be A's here, for most of a TTL.
    const held = await new Leases(b.store, 'probe', systemClock).holder('webhook-lane:i1');
    expect(held?.holder ?? null, 'the lease released by the clean stop').to.be.oneOf([null, 'node-b']);
    await waitFor(() => b.claims.owns('i1'), 'node B owns the lane', 5 * TTL);
    // At B's next round (every TTL / 3, plus round trips that take long on a loaded CI box), not
    // after the lease would have lapsed (a TTL, then B's round) plus the same round trips.
    expect(Date.now() - stoppedAt).to.be.below(2 * TTL);
  });
});

describe('a webhook lane emptied while it waits for its turn', () => {
  const stub = (instanceId: string, seq: number, host: string): Stub => ({
    doc: { _id: `${instanceId}-${seq}` } as DeliveryDoc,
    id: `${instanceId}-${seq}`,
    instanceId,
    seq,
    host,
    state: 'queued',
  });

  it('starts nothing for the emptied lane, spends no try on it, and takes the lane again from seq 1 once reset', () => {
    const scheduler = new Scheduler({ perInstance: 1, perHost: 4, global: 16, laneHeld: 8, hostRetriesHeld: 8 });
    for (const seq of [1, 2, 3]) scheduler.addFirst(stub('a', seq, 'h1'));
    scheduler.addFirst(stub('b', 1, 'h2'));
    const lane = scheduler.lane('a');
    expect(scheduler.dropQueued(lane).map((s) => s.seq)).to.deep.equal([1, 2, 3]);
    lane.maxSeq = 0;
    // The other host's work still starts, though the emptied lane came first in turn.
    expect(scheduler.next()?.stub.id).to.equal('b-1');
    expect(scheduler.next()).to.equal(undefined);
    // The lane is read again from the log after a reset: its first delivery goes first.
    expect(scheduler.addFirst(stub('a', 1, 'h1'))).to.equal(true);
    expect(scheduler.next()?.stub.id).to.equal('a-1');
  });
});
