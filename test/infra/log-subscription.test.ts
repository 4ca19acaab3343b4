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
    // The first read fills a whole page; the next two reads fail.
    let reads = 0;
    const source: LogSource = {
      head: new DurableHead(600),
      closed: new AbortController().signal,
      read(after, upTo, maxCount) {
        reads++;
        if (reads === 2 || reads === 3) throw new Error('read failed');
        const page: RecordedEvent[] = [];
        for (let p = after + 1; p <= upTo && page.length < maxCount; p++) page.push(recorded(p));
        return page;
      },
    };
    const subscription = new LogSubscription(source, 0);
    const seen: bigint[] = [];
    // The batch ends at the failed read and keeps the page it took.
    for (const event of await subscription.nextBatch(1000)) seen.push(event.position);
    expect(seen).to.have.length(512);
    // The next call has nothing in hand when the read fails again: that call rejects.
    const failed = await subscription.nextBatch(1000).then(() => null, (err: Error) => err);
    expect(failed?.message).to.equal('read failed');
    for (const event of await subscription.nextBatch(1000)) seen.push(event.position);
    await subscription.unsubscribe();
    expect(seen).to.deep.equal(Array.from({ length: 600 }, (_, i) => BigInt(i + 1)));
  });
});
