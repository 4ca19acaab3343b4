import { expect } from 'chai';
import { BoundedCache } from '../../../src/sessions/baileys/bounded-cache.js';
import { NumberDirectory, type OnWhatsApp } from '../../../src/sessions/baileys/number-directory.js';

const MINUTE = 60_000;

/**
 * How long the answers of number checks are kept (the lookup itself runs against Baileys' real
 * socket in phone-traffic.test.ts): on WhatsApp, an hour; not on WhatsApp, minutes; no answer, never.
 */
describe('NumberDirectory: what a number check remembers', () => {
  let now: number;
  let asked: string[][];
  let answers: (Awaited<ReturnType<OnWhatsApp>>)[];

  const directory = () => {
    const cache = new BoundedCache({ max: 100, ttlMs: 60 * MINUTE, now: () => now });
    return new NumberDirectory(async (...jids) => (asked.push(jids), answers.shift()), cache);
  };

  beforeEach(() => {
    now = 1_000_000;
    asked = [];
    answers = [];
  });

  it('a number not on WhatsApp is asked again after minutes, not after an hour', async () => {
    const numbers = directory();
    answers.push([], [{ jid: '5511955554444@s.whatsapp.net', exists: true }]);
    expect(await numbers.check('5511955554444')).to.deep.equal({ exists: false });
    now += 4 * MINUTE;
    expect(await numbers.check('5511955554444')).to.deep.equal({ exists: false });
    expect(asked).to.have.length(1);
    now += 2 * MINUTE;
    expect(await numbers.check('5511955554444')).to.deep.equal({ exists: true, jid: '5511955554444@s.whatsapp.net' });
    expect(asked).to.have.length(2);
  });

  it('a number on WhatsApp is remembered for the hour', async () => {
    const numbers = directory();
    answers.push([{ jid: '5511988887777@s.whatsapp.net', exists: true }]);
    await numbers.check('5511988887777');
    now += 59 * MINUTE;
    expect(await numbers.check('5511988887777')).to.deep.equal({ exists: true, jid: '5511988887777@s.whatsapp.net' });
    expect(asked).to.have.length(1);
  });

  it('a lookup the network did not answer fails, and is not remembered', async () => {
    const numbers = directory();
    answers.push(undefined, [{ jid: '5511988887777@s.whatsapp.net', exists: true }]);
    let error: unknown;
    await numbers.check('5511988887777').catch((e: unknown) => (error = e));
    expect(String(error)).to.match(/did not answer/);
    expect(await numbers.address('5511988887777')).to.equal('5511988887777@s.whatsapp.net');
    expect(asked).to.have.length(2);
  });
});
