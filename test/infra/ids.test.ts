import { expect } from 'chai';
import { randomIds, uuidV7 } from '../../src/infra/ids.js';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const millisOf = (id: string) => parseInt(id.replace(/-/g, '').slice(0, 12), 16);

describe('ids', () => {
  it('makes RFC 9562 version 7 UUIDs that carry the time they were made', () => {
    const before = Date.now();
    const id = randomIds.uuid();
    expect(id).to.match(V7);
    expect(millisOf(id)).to.be.within(before, Date.now() + 1);
  });

  it('sorts ids in the order they were made, within one millisecond too, and never repeats one', () => {
    const now = Date.now();
    // More than the 12-bit counter holds in one millisecond: the overflow borrows the next one.
    const ids = Array.from({ length: 10_000 }, () => uuidV7(now));
    for (let i = 1; i < ids.length; i++) expect((ids[i - 1] as string) < (ids[i] as string), `${ids[i - 1]} < ${ids[i]}`).to.equal(true);
    expect(new Set(ids).size).to.equal(ids.length);
    expect(ids.every((id) => V7.test(id))).to.equal(true);
    expect(millisOf(ids[0] as string)).to.equal(now);
    // A clock that steps back does not make an id sort before earlier ones.
    const later = uuidV7(now - 5_000);
    expect(later > (ids[ids.length - 1] as string)).to.equal(true);
  });
});
