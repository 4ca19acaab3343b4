import { expect } from 'chai';
import { DurableHead } from '../../src/infra/eventstore/embedded/durable-head.js';
import { LogSubscription, type LogSource } from '../../src/infra/eventstore/embedded/subscription.js';
import type { RecordedEvent } from '../../src/infra/eventstore/port.js';

const recorded = (position: number): RecordedEvent => ({
  id: `e${position}`,
  type: 'T',
  streamId: 's',
  revision: BigInt(position),
  position: BigInt(position),
  data: {},
  metadata: {},
  created: new Date(0),
});

describe('LogSubscription', () => {
  it('keeps the events a batch already took when a later read of the log fails', async () => {
    // The first read fills a whole page; reading the next one fails once.
    let reads = 0;
    const source: LogSource = {
      head: new DurableHead(600),
      closed: new AbortController().signal,
      read(after, upTo, maxCount) {
        if (++reads === 2) throw new Error('read failed');
        const page: RecordedEvent[] = [];
        for (let p = after + 1; p <= upTo && page.length < maxCount; p++) page.push(recorded(p));
        return page;
      },
    };
    const subscription = new LogSubscription(source, 0);
    const seen: bigint[] = [];
    for (let tries = 0; seen.length < 600 && tries < 10; tries++) {
      try {
        for (const event of await subscription.nextBatch(1000)) seen.push(event.position);
      } catch {
        // A failed read surfaces on a call that had nothing to hand out yet.
      }
    }
    await subscription.unsubscribe();
    expect(reads).to.be.greaterThan(2);
    expect(seen).to.deep.equal(Array.from({ length: 600 }, (_, i) => BigInt(i + 1)));
  });
});
