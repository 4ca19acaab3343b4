import { expect } from 'chai';
import { SignInThrottle, type Attempt } from '../../src/api/auth/sign-in-throttle.js';
import { DomainError } from '../../src/domain/errors.js';

describe('SignInThrottle', () => {
  let now = Date.parse('2026-01-01T00:00:00Z');
  const clock = { now: () => new Date(now) };
  const from = (address: string, account = 'login:victim@example.com'): Attempt => ({ account, address });
  const refusal = (fn: () => void): DomainError => {
    try {
      fn();
    } catch (err) {
      return err as DomainError;
    }
    return expect.fail('expected 429');
  };

  it('given ten attempts in flight from one address, when an eleventh starts, then it is refused before any check, until the window ends', () => {
    const throttle = new SignInThrottle(clock);
    for (let i = 0; i < 10; i++) throttle.begin(from('1.1.1.1'));
    const refused = refusal(() => throttle.begin(from('1.1.1.1')));
    expect(refused.type).to.equal('rate_limited');
    // Those guesses nearly always fail: a retry can succeed only when the window is over (finding 14).
    expect(refused.retryAfterSeconds).to.be.closeTo(15 * 60, 1);
    // Another address is not affected.
    throttle.begin(from('2.2.2.2'));
  });

  it('given ten failures, then the pair is refused for the rest of the window, then free again', async () => {
    const throttle = new SignInThrottle(clock);
    for (let i = 0; i < 10; i++) {
      throttle.begin(from('3.3.3.3'));
      void throttle.fail(from('3.3.3.3'));
    }
    expect(refusal(() => throttle.begin(from('3.3.3.3'))).retryAfterSeconds).to.be.closeTo(15 * 60, 1);
    now += 15 * 60_000;
    throttle.begin(from('3.3.3.3'));
  });

  it('a success clears the pair, an abandoned check counts nothing', () => {
    const throttle = new SignInThrottle(clock);
    for (let i = 0; i < 9; i++) {
      throttle.begin(from('4.4.4.4'));
      throttle.abandon(from('4.4.4.4'));
    }
    for (let i = 0; i < 9; i++) {
      throttle.begin(from('4.4.4.4'));
      void throttle.fail(from('4.4.4.4'));
    }
    throttle.begin(from('4.4.4.4'));
    throttle.succeed(from('4.4.4.4'));
    for (let i = 0; i < 10; i++) throttle.begin(from('4.4.4.4'));
  });

  it('caps checks in flight across all accounts and addresses', () => {
    const throttle = new SignInThrottle(clock, 3);
    for (let i = 0; i < 3; i++) throttle.begin(from(`5.5.5.${i}`, `login:user${i}`));
    expect(refusal(() => throttle.begin(from('5.5.5.9', 'login:other'))).type).to.equal('rate_limited');
    throttle.succeed(from('5.5.5.0', 'login:user0'));
    throttle.begin(from('5.5.5.9', 'login:other'));
  });
});
