import type { CacheStore } from '@whiskeysockets/baileys';
import { expect } from 'chai';
import { BoundedCache } from '../../../src/sessions/baileys/bounded-cache.js';
import { formatWaVersion, parseWaVersion } from '../../../src/sessions/baileys/version.js';

describe('BoundedCache (the caches handed to Baileys)', () => {
  it('is a Baileys CacheStore that evicts the least recently used entry past its cap', () => {
    const cache: CacheStore & { size: number } = new BoundedCache({ max: 2, ttlMs: 60_000 });
    cache.set('a', 1);
    cache.set('b', 2);
    expect(cache.get('a')).to.equal(1);
    cache.set('c', 3);
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).to.deep.equal([1, undefined, 3]);
    expect(cache.size).to.equal(2);
  });

  it('keeps null (Baileys caches deleted keys as null) apart from absent', () => {
    const cache = new BoundedCache({ max: 10, ttlMs: 60_000 });
    cache.set('gone', null);
    expect(cache.get('gone')).to.equal(null);
    expect(cache.get('never')).to.equal(undefined);
    cache.del('gone');
    expect(cache.get('gone')).to.equal(undefined);
  });

  it('expires entries by age without a timer of its own', async () => {
    const cache = new BoundedCache({ max: 10, ttlMs: 5 });
    cache.set('k', 'v');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(cache.get('k')).to.equal(undefined);
  });
});

describe('WhatsApp version setting', () => {
  it('parses the published form into the triple Baileys announces', () => {
    expect(parseWaVersion(' 2.3000.1027934701 ')).to.deep.equal([2, 3000, 1_027_934_701]);
    expect(formatWaVersion([2, 3000, 1_027_934_701])).to.equal('2.3000.1027934701');
  });

  it('refuses anything else at start-up', () => {
    for (const bad of ['', '2.3000', '2.3000.x', '2.3000.1.4', '0.1.2', '2.-1.3', '99999999999999999.1.1']) {
      expect(() => parseWaVersion(bad), bad).to.throw(/invalid WhatsApp version/);
    }
  });
});
