import { expect } from 'chai';
import { Leases } from '../../src/cluster/leases.js';
import { systemClock } from '../../src/infra/clock.js';
import { MongoDocumentStore } from '../../src/infra/docstore/mongodb/mongodb-document-store.js';
import { createLogger } from '../../src/infra/logging/logger.js';
import { InstanceQueries } from '../../src/projections/instances/instance-queries.js';
import { SessionQueries } from '../../src/projections/sessions/session-queries.js';
import { sessionLease, SessionOwnership, type SessionControl } from '../../src/sessions/ownership/session-ownership.js';
import { startMongoTestServer, type MongoTestServer } from '../servers/mongodb/server.js';
import { waitFor } from '../support/sandbox.js';

const TTL_MS = 1_500;

/**
 * The owner's side of the lease when the database goes away: renewals hang, and the watchdog
 * still closes the session before the stored lease can lapse (the process tests in
 * two-nodes.test.ts cover the hand-over between real gateways).
 */
describe('session ownership when its node loses the database', () => {
  let server: MongoTestServer;
  let store: MongoDocumentStore;
  let ownership: SessionOwnership | undefined;

  beforeEach(async () => {
    server = await startMongoTestServer();
    store = await MongoDocumentStore.open({ url: server.urlFor('ownership') });
  });
  afterEach(async () => {
    // The database is gone: release() would hang on it, so the rounds are only stopped.
    void ownership?.stop();
    ownership = undefined;
    await store.close().catch(() => undefined);
    await server.close().catch(() => undefined);
  });

  it('closes the session before its lease can lapse, and fences its writes from then on', async () => {
    const released: { id: string; at: number }[] = [];
    // The manager's side, as the gateway wires it: here only when each session was let go.
    const control: SessionControl = {
      restart: async () => true,
      release: async (id) => void released.push({ id, at: Date.now() }),
      isLive: () => true,
    };
    const leases = new Leases(store, 'node-1', systemClock);
    ownership = new SessionOwnership({ leases, sessions: new SessionQueries(store), instances: new InstanceQueries(store), logger: createLogger('silent'), ttlMs: TTL_MS });
    ownership.start(control);
    expect(await ownership.mayOpen('i1')).to.equal(true);
    expect(ownership.mayWrite('i1')).to.equal(true);
    // Renewed a few times while the database answers.
    await new Promise((r) => setTimeout(r, TTL_MS));
    expect(released).to.deep.equal([]);
    const lease = (await leases.holder(sessionLease('i1')))!;
    expect(lease.holder).to.equal('node-1');
    await server.close();
    await waitFor(() => released.length === 1, 'the session let go', 3 * TTL_MS);
    expect(released[0]!.id).to.equal('i1');
    // The lease as last read, or a renewal after it, lasts until `lease.expiresAt` at least: the
    // session was closed before then.
    expect(released[0]!.at).to.be.below(lease.expiresAt);
    expect(ownership.mayWrite('i1')).to.equal(false);
    expect(ownership.owned()).to.deep.equal([]);
    // An instance it never held is not fenced (a logout on any node records).
    expect(ownership.mayWrite('i2')).to.equal(true);
  });

  it('tells the Baileys 440 seam whether the session moved to another node', async () => {
    const logger = createLogger('silent');
    const deps = { sessions: new SessionQueries(store), instances: new InstanceQueries(store), logger, ttlMs: 60_000 };
    const one = new SessionOwnership({ ...deps, leases: new Leases(store, 'node-1', systemClock) });
    const two = new SessionOwnership({ ...deps, leases: new Leases(store, 'node-2', systemClock) });
    expect(await one.movedElsewhere('i1')).to.equal(false);
    expect(await one.mayOpen('i1')).to.equal(true);
    expect(await two.mayOpen('i1')).to.equal(false);
    expect(await one.movedElsewhere('i1')).to.equal(false);
    expect(await two.movedElsewhere('i1')).to.equal(true);
    await one.stop();
    expect(await two.mayOpen('i1')).to.equal(true);
    expect(await one.movedElsewhere('i1')).to.equal(true);
    await two.stop();
  });
});
