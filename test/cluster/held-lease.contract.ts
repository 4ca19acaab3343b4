import { expect } from 'chai';
import { HeldLease } from '../../src/cluster/held-lease.js';
import { LEASES_COLLECTION, Leases, type LeaseDoc } from '../../src/cluster/leases.js';
import { systemClock } from '../../src/infra/clock.js';
import type { DocumentStore } from '../../src/infra/docstore/port.js';
import { waitFor } from '../support/sandbox.js';

const TTL = 600;

/** Leases whose renewals can be made to hang, as on a database that went away. */
class CuttableLeases extends Leases {
  cut = false;
  override async renew(name: string, token: number, ttlMs: number): Promise<boolean> {
    if (this.cut) return new Promise<boolean>(() => undefined);
    return super.renew(name, token, ttlMs);
  }
}

/**
 * The contract every lease holder relies on (projections writer, session ownership, webhook and
 * export lanes): held while renewed, stopped before the stored lease can lapse when renewals do not
 * land, stopped at once when another node holds it, given back at once on release.
 */
export function heldLeaseContract(adapterName: string, factory: () => Promise<{ store: DocumentStore; cleanup(): Promise<void> }>): void {
  describe(`HeldLease: ${adapterName}`, function () {
    this.timeout(20_000);
    let store: DocumentStore;
    let cleanup: () => Promise<void>;
    const held: HeldLease[] = [];
    beforeEach(async () => ({ store, cleanup } = await factory()));
    afterEach(async () => {
      for (const h of held.splice(0)) h.drop();
      await cleanup();
    });

    async function hold(leases: Leases, name: string, lost: string[]): Promise<HeldLease | null> {
      const lease = await HeldLease.acquire({ leases, name, ttlMs: TTL, lost: (why) => void lost.push(why) });
      if (lease) held.push(lease);
      return lease;
    }

    it('stays held past several ttls while renewed; another node is refused meanwhile', async () => {
      const a = new Leases(store, 'node-a', systemClock);
      const b = new Leases(store, 'node-b', systemClock);
      const lost: string[] = [];
      const lease = (await hold(a, 'x', lost))!;
      expect(lease.token).to.equal(1);
      const stored = () => store.collection<LeaseDoc>(LEASES_COLLECTION).findOne({ _id: 'x' });
      const first = (await stored())!.expiresAt;
      // Renewed: the stored expiry moves on by itself (an event, not a sleep).
      await waitFor(async () => (await stored())!.expiresAt > first + TTL, 'renewed beyond a ttl', 10 * TTL);
      expect(lease.valid).to.equal(true);
      expect(lost).to.deep.equal([]);
      expect(await b.acquire('x', TTL)).to.equal(null);
    });

    it('stops before the stored lease can lapse when renewals hang, and aborts its signal', async () => {
      const a = new CuttableLeases(store, 'node-a', systemClock);
      const lost: { why: string; at: number }[] = [];
      const lease = (await HeldLease.acquire({ leases: a, name: 'x', ttlMs: TTL, lost: (why) => void lost.push({ why, at: Date.now() }) }))!;
      held.push(lease);
      a.cut = true;
      const expiresAt = (await store.collection<LeaseDoc>(LEASES_COLLECTION).findOne({ _id: 'x' }))!.expiresAt;
      await waitFor(() => lost.length === 1, 'the lease let go', 5 * TTL);
      expect(lost[0]!.why).to.match(/not renewed in time/);
      expect(lost[0]!.at, 'stopped before the last stored expiry').to.be.below(expiresAt);
      expect(lease.valid).to.equal(false);
      expect(lease.signal.aborted).to.equal(true);
    });

    it('stops at its next renewal when another node holds the lease, and never calls lost twice', async () => {
      const a = new Leases(store, 'node-a', systemClock);
      const lost: string[] = [];
      const lease = (await hold(a, 'x', lost))!;
      // Another node took it after a lapse this node did not notice (token moved on).
      await store.collection<LeaseDoc>(LEASES_COLLECTION).updateOne({ _id: 'x' }, { $set: { holder: 'node-b', token: 2 } });
      await waitFor(() => lost.length === 1, 'the lease let go', 5 * TTL);
      expect(lost[0]).to.match(/another node/);
      expect(await lease.renew()).to.equal(false);
      expect(lease.valid).to.equal(false);
      expect(lost).to.have.length(1);
      // The other node's lease is untouched by this node's release after the loss.
      expect((await a.holder('x'))?.holder).to.equal('node-b');
    });

    it('gives the lease back at once on release, without calling lost; the next holder gets a larger token', async () => {
      const a = new Leases(store, 'node-a', systemClock);
      const b = new Leases(store, 'node-b', systemClock);
      const lost: string[] = [];
      const lease = (await hold(a, 'x', lost))!;
      expect(await b.acquire('x', TTL)).to.equal(null);
      await lease.release();
      expect(lease.valid).to.equal(false);
      expect(lease.signal.aborted).to.equal(true);
      expect(await b.acquire('x', TTL)).to.equal(2);
      expect(lost).to.deep.equal([]);
    });
  });
}
