import { expect } from 'chai';
import { outweighs } from '../../src/infra/outweighs.js';

describe('outweighs (what in-memory caches keep out)', () => {
  it('weighs strings by length, byte arrays by size, and everything else as one', () => {
    expect(outweighs({ a: 'x'.repeat(50) }, 100)).to.equal(false);
    expect(outweighs({ a: 'x'.repeat(200) }, 100)).to.equal(true);
    expect(outweighs({ b: Buffer.alloc(200) }, 100)).to.equal(true);
    expect(outweighs({ list: Array.from({ length: 50 }, (_, i) => i) }, 100)).to.equal(false);
    expect(outweighs({ list: Array.from({ length: 500 }, (_, i) => ({ i })) }, 100)).to.equal(true);
  });

  it('stops as soon as the budget is spent, however large the value', () => {
    let touched = 0;
    const huge = new Proxy(
      Array.from({ length: 100_000 }, (_, i) => ({ i })),
      {
        get(target, key, receiver) {
          if (typeof key === 'string' && /^\d+$/.test(key)) touched++;
          return Reflect.get(target, key, receiver) as unknown;
        },
      },
    );
    expect(outweighs({ huge }, 1024)).to.equal(true);
    expect(touched).to.be.at.most(1024);
    expect(outweighs({ wide: Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, i])) }, 1024)).to.equal(true);
  });
});
