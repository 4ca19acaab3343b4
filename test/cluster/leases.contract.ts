import { expect } from 'chai';
import { Leases } from '../../src/cluster/leases.js';
import type { Clock } from '../../src/infra/clock.js';
import type { DocumentStore } from '../../src/infra/docstore/port.js';

/** A clock the test moves by hand. */
export class ManualClock implements Clock {
  constructor(public ms = Date.parse('2026-01-01T00:00:00Z')) {}
  now(): Date {
    return new Date(this.ms);
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}

/** The lease primitive's contract, on any DocumentStore: two nodes share one store and one clock. */
export function leasesContract(adapterName: string, factory: () => Promise<{ store: DocumentStore; cleanup(): Promise<void> }>): void {
  describe(`leases: ${adapterName}`, () => {
    let store: DocumentStore;
    let cleanup: () => Promise<void>;
    let clock: ManualClock;
    let a: Leases;
    let b: Leases;
    beforeEach(async () => {
      ({ store, cleanup } = await factory());
      clock = new ManualClock();
      a = new Leases(store, 'node-a', clock);
      b = new Leases(store, 'node-b', clock);
    });
    afterEach(async () => cleanup());

    it('gives a free lease to the first node and refuses it to another while it lasts', async () => {
      expect(await a.acquire('s1', 1_000)).to.equal(1);
      expect(await b.acquire('s1', 1_000)).to.equal(null);
      expect(await b.holder('s1')).to.deep.equal({ holder: 'node-a', token: 1, expiresAt: clock.ms + 1_000 });
      clock.advance(999);
      expect(await b.acquire('s1', 1_000)).to.equal(null);
    });

    it('hands a lapsed lease to another node with a larger fencing token; the old holder can no longer renew or release it', async () => {
      expect(await a.acquire('s1', 1_000)).to.equal(1);
      clock.advance(1_000);
      expect(await a.holder('s1')).to.equal(null);
      expect(await b.acquire('s1', 1_000)).to.equal(2);
      expect(await a.renew('s1', 1, 1_000)).to.equal(false);
      expect(await a.release('s1', 1)).to.equal(false);
      expect((await a.holder('s1'))?.holder).to.equal('node-b');
      expect(await a.currentToken('s1')).to.equal(2);
    });

    it('renews: the holder keeps its token past the first term, others stay out', async () => {
      const token = (await a.acquire('s1', 1_000)) as number;
      clock.advance(800);
      expect(await a.renew('s1', token, 1_000)).to.equal(true);
      clock.advance(800);
      expect(await b.acquire('s1', 1_000)).to.equal(null);
      expect(await a.acquire('s1', 1_000)).to.equal(token);
      expect((await b.holder('s1'))?.expiresAt).to.equal(clock.ms + 1_000);
    });

    it('lets the holder renew a lapsed lease nobody took (the unchanged token proves it), and not one another node took', async () => {
      expect(await a.acquire('s1', 1_000)).to.equal(1);
      clock.advance(5_000);
      expect(await a.renew('s1', 1, 1_000)).to.equal(true);
      expect(await b.acquire('s1', 1_000)).to.equal(null);
    });

    it('frees a released lease at once and keeps counting tokens across releases', async () => {
      expect(await a.acquire('s1', 60_000)).to.equal(1);
      expect(await a.release('s1', 1)).to.equal(true);
      expect(await a.holder('s1')).to.equal(null);
      expect(await b.acquire('s1', 60_000)).to.equal(2);
      expect(await b.release('s1', 2)).to.equal(true);
      expect(await a.acquire('s1', 60_000)).to.equal(3);
    });

    it('keeps leases of different names apart', async () => {
      expect(await a.acquire('s1', 1_000)).to.equal(1);
      expect(await b.acquire('s2', 1_000)).to.equal(1);
      expect((await a.holder('s2'))?.holder).to.equal('node-b');
      expect(await a.currentToken('never')).to.equal(0);
    });

    it('gives a contended lease to exactly one of many racing nodes, free or lapsed', async () => {
      const nodes = Array.from({ length: 8 }, (_, i) => new Leases(store, `n${i}`, clock));
      const first = await Promise.all(nodes.map((n) => n.acquire('race', 1_000)));
      expect(first.filter((t) => t !== null)).to.deep.equal([1]);
      clock.advance(1_000);
      const second = await Promise.all(nodes.map((n) => n.acquire('race', 1_000)));
      expect(second.filter((t) => t !== null)).to.deep.equal([2]);
    });
  });
}
