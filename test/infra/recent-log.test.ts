import { expect } from 'chai';
import { RecentLog } from '../../src/infra/eventstore/embedded/recent-log.js';
import type { StoredEvent } from '../../src/infra/eventstore/embedded/storage.js';

const stored = (n: number): StoredEvent => ({ id: `e${n}`, type: 'T', streamId: 's', revision: n, data: { n, nested: { list: [n] } }, metadata: {}, created: n });
const positions = (events: { position: bigint }[] | undefined) => events?.map((e) => Number(e.position));

describe('RecentLog (the newest log entries, for subscribers at the head)', () => {
  it('answers a range only when it holds every position of it', () => {
    const log = new RecentLog(4);
    expect(log.read(0, 1, 10)).to.equal(undefined);
    for (let p = 1; p <= 10; p++) log.add(p, stored(p));
    // Holds 7..10 now.
    expect(positions(log.read(6, 10, 10))).to.deep.equal([7, 8, 9, 10]);
    expect(positions(log.read(7, 10, 2))).to.deep.equal([8, 9]);
    expect(log.read(5, 10, 10)).to.equal(undefined);
    expect(log.read(6, 11, 10)).to.equal(undefined);
  });

  it('forgets the entries of an aborted batch, and starts over on a gap', () => {
    const log = new RecentLog(100);
    for (let p = 1; p <= 5; p++) log.add(p, stored(p));
    log.dropAfter(3);
    expect(log.read(0, 4, 10)).to.equal(undefined);
    expect(positions(log.read(0, 3, 10))).to.deep.equal([1, 2, 3]);
    log.add(9, stored(9));
    expect(log.read(0, 3, 10)).to.equal(undefined);
    expect(positions(log.read(8, 9, 10))).to.deep.equal([9]);
    log.clear();
    expect(log.read(8, 9, 10)).to.equal(undefined);
  });

  it('hands out entries no reader can change for the others', () => {
    const log = new RecentLog(10);
    log.add(1, stored(1));
    const [event] = log.read(0, 1, 1) ?? [];
    expect(() => {
      (event?.data as { nested: { list: number[] } }).nested.list.push(2);
    }).to.throw(TypeError);
    expect(log.read(0, 1, 1)?.[0]?.data).to.deep.equal({ n: 1, nested: { list: [1] } });
  });

  it('does not keep a large event, and starts a new run after it', () => {
    const log = new RecentLog(100);
    log.add(1, stored(1));
    log.add(2, { ...stored(2), data: { messages: Array.from({ length: 5000 }, (_, i) => ({ text: `message ${i}` })) } });
    log.add(3, stored(3));
    expect(log.read(0, 3, 10)).to.equal(undefined);
    expect(log.read(1, 3, 10)).to.equal(undefined);
    expect(positions(log.read(2, 3, 10))).to.deep.equal([3]);
  });
});
