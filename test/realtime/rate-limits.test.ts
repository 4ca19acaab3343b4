import { expect } from 'chai';
import { expectError, newAccount, newInstance, startTestGateway, type TestGateway } from '../support/gateway.js';
import { RateLimits } from '../../src/api/middleware/rate-limits.js';
import { DomainError } from '../../src/domain/errors.js';

describe('request rate limits over HTTP', () => {
  let t: TestGateway;
  // The limits' time, moved only by the test: the buckets refill exactly as much as it says,
  // however long the requests take on a loaded machine.
  let ms = 0;
  before(async () => {
    t = await startTestGateway({ RATE_LIMIT_ACCOUNT_PER_S: '5', RATE_LIMIT_INSTANCE_PER_S: '2' }, { monotonicMs: () => ms });
  });
  after(async () => t.stop());

  it("refuses an instance's burst past twice its rate with 429 and Retry-After, and spares other instances and accounts", async () => {
    const owner = await newAccount(t.api);
    const other = await newAccount(t.api);
    const { id } = await newInstance(t.api, owner);
    const { id: second } = await newInstance(t.api, other);
    // A second on: the account budgets spent on the setup are full again.
    ms += 1000;
    const answers = await Promise.all(Array.from({ length: 6 }, () => t.api('GET', `/instances/${id}/session/status`, { token: owner.jwt })));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 200)).to.have.length(4);
    const refused = answers.find((a) => a.status === 429);
    expectError(refused!, 429, 'rate_limited');
    expect(Number(refused!.headers.get('retry-after'))).to.be.at.least(1);
    // Another account's instance has its own budget.
    expect((await t.api('GET', `/instances/${second}/session/status`, { token: other.jwt })).status).to.equal(200);
  });

  it('refills with time', async () => {
    const owner = await newAccount(t.api);
    const { id } = await newInstance(t.api, owner);
    ms += 1000;
    for (let i = 0; i < 4; i++) expect((await t.api('GET', `/instances/${id}/session/status`, { token: owner.jwt })).status).to.equal(200);
    expect((await t.api('GET', `/instances/${id}/session/status`, { token: owner.jwt })).status).to.equal(429);
    // Half a second at 2 a second: one request's worth, and no more.
    ms += 500;
    expect((await t.api('GET', `/instances/${id}/session/status`, { token: owner.jwt })).status).to.equal(200);
    expect((await t.api('GET', `/instances/${id}/session/status`, { token: owner.jwt })).status).to.equal(429);
  });
});

describe('RateLimits (token buckets)', () => {
  it('holds the account budget across its instances, refuses without spending, and says how long to wait', () => {
    let now = 0;
    const limits = new RateLimits({ accountPerS: 2, instancePerS: 10 }, () => now);
    for (let i = 0; i < 4; i++) limits.take('a', `i${i}`);
    let error: unknown;
    try {
      limits.take('a', 'i9');
    } catch (err) {
      error = err;
    }
    expect(error).to.be.instanceOf(DomainError);
    expect((error as DomainError).type).to.equal('rate_limited');
    expect((error as DomainError).retryAfterSeconds).to.be.closeTo(0.5, 1e-9);
    limits.take('b', 'i0');
    now += 500;
    limits.take('a', 'i9');
  });
});
