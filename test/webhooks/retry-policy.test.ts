import { expect } from 'chai';
import { parseRetryAfter, retryDelayMs, verdictFor } from '../../src/webhooks/retry-policy.js';

describe('webhook retry policy', () => {
  const timing = { baseMs: 1000, maxMs: 3_600_000, horizonMs: 3 * 86_400_000 };

  it('counts any 2xx as delivered, 4xx other than 408/425/429 as final, everything else as retry', () => {
    for (const s of [200, 201, 202, 204, 299]) expect(verdictFor(s), String(s)).to.equal('delivered');
    for (const s of [400, 401, 403, 404, 405, 409, 410, 413, 422, 499]) expect(verdictFor(s), String(s)).to.equal('final');
    for (const s of [408, 425, 429, 500, 502, 503, 504, 301, 302, 100]) expect(verdictFor(s), String(s)).to.equal('retry');
  });

  it('draws the delay uniformly from [0, base·2^(n-1)], capped (full jitter)', () => {
    expect(retryDelayMs(timing, 1, () => 0.999999)).to.equal(999);
    expect(retryDelayMs(timing, 2, () => 0.999999)).to.equal(1999);
    expect(retryDelayMs(timing, 5, () => 0.5)).to.equal(8000);
    expect(retryDelayMs(timing, 1, () => 0)).to.equal(0);
    expect(retryDelayMs(timing, 40, () => 0.999999)).to.be.lessThan(3_600_000);
    expect(retryDelayMs(timing, 40, () => 0.999999)).to.be.greaterThan(3_599_000);
    expect(retryDelayMs(timing, 5000, () => 0.5)).to.equal(1_800_000);
  });

  it('honours Retry-After as a floor, within the cap', () => {
    expect(retryDelayMs(timing, 1, () => 0.1, 30_000)).to.equal(30_000);
    expect(retryDelayMs(timing, 1, () => 0.1, 10 * 3_600_000)).to.equal(3_600_000);
    expect(parseRetryAfter('120', 0)).to.equal(120_000);
    expect(parseRetryAfter(new Date(60_000).toUTCString(), 0)).to.equal(60_000);
    expect(parseRetryAfter('soon', 0)).to.equal(undefined);
    expect(parseRetryAfter(undefined, 0)).to.equal(undefined);
  });
});
