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
});
