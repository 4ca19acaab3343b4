import { expect } from 'chai';
import { BoundedMap } from '../../src/infra/bounded-map.js';

describe('BoundedMap', () => {
  it('keeps the newest entries, a key set again counting as new', () => {
    const map = new BoundedMap<string, number>(2);
    map.set('a', 1).set('b', 2).set('a', 3).set('c', 4);
    expect([...map]).to.deep.equal([
      ['a', 3],
      ['c', 4],
    ]);
  });

  it('evicts exactly like a model through re-sets, deletes and clears (the eviction walk is kept between sets)', () => {
    const limit = 5;
    const map = new BoundedMap<number, number>(limit);
    let model: number[] = [];
    let seed = 7;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return (seed >>> 16) % n;
    };
    for (let step = 0; step < 5000; step++) {
      const key = random(12);
      const action = random(20);
      if (action === 0) {
        map.clear();
        model = [];
      } else if (action < 4) {
        map.delete(key);
        model = model.filter((k) => k !== key);
      } else {
        map.set(key, step);
        model = [...model.filter((k) => k !== key), key];
        if (model.length > limit) model.shift();
      }
      expect([...map.keys()], `step ${step}`).to.deep.equal(model);
    }
  });
});
