import { expect } from 'chai';
import { RecentIds } from '../../src/infra/eventstore/embedded/recent-ids.js';

describe('RecentIds (event ids of recent appends, for retries with any)', () => {
  it('always remembers the newest `capacity` ids, per stream, and forgets ids twice that old', () => {
    const recent = new RecentIds(100);
    for (let i = 0; i < 1000; i++) {
      recent.remember(`s${i % 3}`, `e${i}`, i);
      for (const back of [0, 1, 50, 99]) {
        const j = i - back;
        if (j >= 0) expect(recent.revisionOf(`s${j % 3}`, `e${j}`), `${back} ids back at ${i}`).to.equal(j);
      }
      if (i >= 200) expect(recent.revisionOf(`s${(i - 200) % 3}`, `e${i - 200}`)).to.equal(undefined);
    }
    // The same id in another stream is another event.
    expect(recent.revisionOf('s1', 'e999')).to.equal(undefined);
  });

  it('answers the newest revision of an id remembered again', () => {
    const recent = new RecentIds(2);
    recent.remember('s', 'a', 0);
    recent.remember('s', 'b', 1);
    recent.remember('s', 'a', 2); // a new generation: the old one still holds a at 0
    expect(recent.revisionOf('s', 'a')).to.equal(2);
    expect(recent.revisionOf('s', 'b')).to.equal(1);
  });
});
