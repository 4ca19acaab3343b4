import { expect } from 'chai';
import { SendPacer } from '../../src/commands/send-pacing/pacer.js';

/**
 * The pacer's turns on a clock moved by hand. The HTTP pacing test bounds each send from the first
 * (record times carry each send's own duration, so gaps between them are no measure); a burst
 * after a stall, which that bound lets through, is ruled out here, where the turns are exact.
 */
describe('send pacer', () => {
  const at = (start = 0) => {
    const clock = { ms: start };
    return { clock, now: () => clock.ms };
  };

  it('lets every send go at once when unpaced', () => {
    const { now } = at();
    const pacer = new SendPacer({ perMinute: null, jitterMs: 0 }, now);
    expect([pacer.tryNow('i'), pacer.tryNow('i'), pacer.tryNow('i')]).to.deep.equal([true, true, true]);
    expect(pacer.readyInMs('i')).to.equal(0);
  });

  it('spaces the sends of an instance by 60 s / rate, each instance on its own', () => {
    const { clock, now } = at(1_000);
    const pacer = new SendPacer({ perMinute: 120, jitterMs: 0 }, now);
    expect(pacer.tryNow('a')).to.equal(true);
    expect(pacer.tryNow('a')).to.equal(false);
    expect(pacer.readyInMs('a')).to.equal(500);
    expect(pacer.tryNow('b')).to.equal(true);
    clock.ms += 499;
    expect(pacer.tryNow('a')).to.equal(false);
    clock.ms += 1;
    expect(pacer.tryNow('a')).to.equal(true);
    expect(pacer.readyInMs('a')).to.equal(500);
  });

  it('after a stall, sends the queued ones a full gap apart, not in a burst', () => {
    const { clock, now } = at();
    const pacer = new SendPacer({ perMinute: 120, jitterMs: 0 }, now);
    expect(pacer.tryNow('a')).to.equal(true);
    pacer.queued('a', 3);
    clock.ms += 10_000;
    // Its turn has long come, but three wait before a new send: it queues behind them.
    expect(pacer.tryNow('a')).to.equal(false);
    const sentAt: number[] = [];
    for (let i = 0; i < 3; i++) {
      clock.ms += pacer.readyInMs('a');
      sentAt.push(clock.ms);
      pacer.dequeued('a', true);
    }
    expect(sentAt).to.deep.equal([10_000, 10_500, 11_000]);
    clock.ms += pacer.readyInMs('a');
    expect(pacer.tryNow('a')).to.equal(true);
  });

  it('takes no turn for a queued send given up, and adds the jitter to each gap', () => {
    const { clock, now } = at();
    const pacer = new SendPacer({ perMinute: 60, jitterMs: 200, random: () => 0.5 }, now);
    pacer.queued('a');
    pacer.dequeued('a', false);
    expect(pacer.readyInMs('a')).to.equal(0);
    expect(pacer.tryNow('a')).to.equal(true);
    expect(pacer.readyInMs('a')).to.equal(1_100);
    clock.ms += 1_100;
    expect(pacer.tryNow('a')).to.equal(true);
  });
});
