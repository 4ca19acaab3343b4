import { expect } from 'chai';
import type { Clock } from '../../src/infra/clock.js';
import { expectError, newAccount, startTestGateway, type TestGateway } from '../support/gateway.js';

/** Issue 27, finding 14: a 429's Retry-After says when a retry can succeed. */
describe('security: sign-in refusals say when to come back', function () {
  this.timeout(60_000);
  // Time stands still unless the test moves it: the answers' waits are exact, however long the
  // thirty checks take on a loaded machine.
  const base = Date.now();
  let offset = 0;
  const clock: Clock = { now: () => new Date(base + offset) };
  let t: TestGateway;
  // The production hashing cost, so the thirty guesses are in flight together.
  before(async () => (t = await startTestGateway({ SCRYPT_LOG_N: '15' }, { clock })));
  after(async () => t.stop());

  it('after thirty wrong passwords at once, the right one succeeds once the shortest Retry-After has passed, not before', async () => {
    const victim = await newAccount(t.api);
    const login = (password: string) => t.api('POST', '/auth/login', { body: { email: victim.email, password } });
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => login(`wrong guess ${i}`)));
    const waits = answers.filter((a) => a.status === 429).map((a) => Number(a.headers.get('retry-after')));
    expect(waits.length).to.be.at.least(20);
    const shortest = Math.min(...waits);
    // Just before it: still refused, and the answer says about as long as what is left.
    offset += (shortest - 5) * 1000;
    const early = await login(victim.password);
    expectError(early, 429, 'rate_limited');
    expect(Number(early.headers.get('retry-after'))).to.be.within(1, 6);
    offset += 5 * 1000;
    const res = await login(victim.password);
    expect(res.status, res.text).to.equal(200);
  });
});
