import { expect } from 'chai';
import type { DeliveryDoc } from '../../src/webhooks/deliveries/documents.js';
import { HeldDeliveries, stubOf } from '../../src/webhooks/dispatch/held-deliveries.js';
import { Scheduler, type SchedulerLimits, type Stub, type Work } from '../../src/webhooks/dispatch/scheduler.js';

const limits = (over: Partial<SchedulerLimits> = {}): SchedulerLimits => ({
  perInstance: 8,
  perHost: 64,
  global: 512,
  laneHeld: 256,
  hostRetriesHeld: 256,
  ...over,
});

const doc = (instanceId: string, seq: number, host = 'https://a.example', state: DeliveryDoc['state'] = 'queued') =>
  ({ _id: `evt_${instanceId}_${seq}`, instance_id: instanceId, seq, host, state }) as DeliveryDoc;

/** Given these queued deliveries, when the dispatcher takes everything it may: the attempts started. */
function takeAll(scheduler: Scheduler, stubs: Stub[]): Work[] {
  for (const stub of stubs) scheduler.addFirst(stub);
  const started: Work[] = [];
  for (let work = scheduler.next(); work; work = scheduler.next()) started.push(work);
  return started;
}

const lane = (instanceId: string, from: number, to: number, host?: string) =>
  Array.from({ length: to - from + 1 }, (_, i) => stubOf(doc(instanceId, from + i, host)));

describe('webhook scheduler', () => {
  it('starts up to perInstance first attempts of one instance, in seq order, then one per attempt that ends', () => {
    const scheduler = new Scheduler(limits({ perInstance: 3 }));
    const started = takeAll(scheduler, lane('a', 1, 10));
    expect(started.map((w) => w.stub.seq)).to.deep.equal([1, 2, 3]);
    expect(started.every((w) => w.first)).to.equal(true);
    expect(scheduler.next()).to.equal(undefined);
    scheduler.finish(started[1]!);
    expect(scheduler.next()?.stub.seq).to.equal(4);
    expect(scheduler.next()).to.equal(undefined);
  });

  it('starts one at a time per instance when perInstance is 1 (WEBHOOK_ORDERED)', () => {
    const scheduler = new Scheduler(limits({ perInstance: 1 }));
    const started = takeAll(scheduler, [...lane('a', 1, 5), ...lane('b', 1, 5)]);
    expect(started.map((w) => `${w.stub.instanceId}${w.stub.seq}`)).to.deep.equal(['a1', 'b1']);
    scheduler.finish(started[0]!);
    expect(scheduler.next()?.stub.seq).to.equal(2);
    expect(scheduler.next()).to.equal(undefined);
  });

  it('caps one host across instances, lets its instances take turns, and keeps other hosts going', () => {
    const scheduler = new Scheduler(limits({ perHost: 4 }));
    const slow = 'https://slow.example';
    const started = takeAll(scheduler, [...lane('a', 1, 10, slow), ...lane('b', 1, 10, slow), ...lane('c', 1, 3)]);
    const onSlow = started.filter((w) => w.stub.host === slow);
    expect(onSlow.map((w) => `${w.stub.instanceId}${w.stub.seq}`)).to.deep.equal(['a1', 'b1', 'a2', 'b2']);
    expect(started.filter((w) => w.stub.host !== slow).map((w) => w.stub.seq)).to.deep.equal([1, 2, 3]);
  });

  it('does not take a delivery its lane has already passed', () => {
    const scheduler = new Scheduler(limits());
    expect(scheduler.addFirst(stubOf(doc('a', 2)))).to.equal(true);
    expect(scheduler.addFirst(stubOf(doc('a', 1)))).to.equal(false);
    expect(scheduler.addFirst(stubOf(doc('a', 2)))).to.equal(false);
  });
});

describe('webhook deliveries held by the dispatcher (HeldDeliveries)', () => {
  it('leaves out of a read what was held, and what was released while the read ran', async () => {
    const known = new HeldDeliveries();
    const [held, endsDuringRead, free] = [1, 2, 3].map((seq) => stubOf(doc('a', seq))) as [Stub, Stub, Stub];
    known.hold(held);
    known.hold(endsDuringRead);
    const read = known.read(async () => {
      // The read sees the log before this attempt's outcome was committed.
      const snapshot = [held.doc, endsDuringRead.doc, free.doc];
      await new Promise((r) => setTimeout(r, 5));
      known.release(endsDuringRead);
      return snapshot;
    });
    const { all, free: takeable } = await read;
    expect(all).to.have.length(3);
    expect(takeable.map((d) => d.seq)).to.deep.equal([3]);
    // A later read may take it again (it was, say, retried by hand since).
    expect((await known.read(async () => [endsDuringRead.doc])).free).to.have.length(1);
  });
});
