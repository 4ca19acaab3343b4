import { expect } from 'chai';
import { Query } from 'mingo';
import { compileSimpleFilter, decideSimple, isSimpleFilter } from '../../../src/infra/docstore/embedded/simple-filter.js';
import type { Filter } from '../../../src/infra/docstore/port.js';

function generator(seed: number) {
  let s = seed >>> 0;
  const next = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)] as T;
  return { next, pick };
}

const VALUES: unknown[] = [0, 1, 2, -1, 1.5, 'a', 'b', '', true, false, null, [1, 2], ['a'], { k: 1 }, new Date(1000), NaN];
const OPERANDS = [0, 1, 2, -1, 1.5, 'a', 'b', '', true, false];
const OPS = ['$eq', '$ne', '$lt', '$lte', '$gt', '$gte', '$exists'] as const;

/** Filters the simple reading does not take, to start some random cases from. */
const ODD_FILTERS: Filter[] = [{ a: {} }, { 'a.b': 1 }, { $or: [{ a: 1 }] }, { a: { $in: [] } }, { a: { $in: [1, null] } }, { a: { $nin: [1] } }, { a: { $exists: 1 } }, { a: [1] }, { a: null }, { a: new Date(0) }];

/** A filter of equalities, $in and comparisons on a and b (a tenth from `odd`, when given), and a document. */
function randomCase(seed: number, odd: readonly Filter[] = []): { filter: Filter; doc: Record<string, unknown> } {
  const g = generator(seed);
  const filter: Filter = odd.length > 0 && g.next() < 0.1 ? { ...g.pick(odd) } : { _id: 'd' };
  for (const field of ['a', 'b']) {
    if (g.next() < 0.3) continue;
    if (g.next() < 0.3) filter[field] = g.pick(OPERANDS);
    else if (g.next() < 0.25) filter[field] = { $in: Array.from({ length: 1 + Math.floor(g.next() * 3) }, () => g.pick(OPERANDS)) };
    else filter[field] = { [g.pick(OPS)]: g.pick(OPERANDS), ...(g.next() < 0.3 ? { [g.pick(OPS)]: g.pick(OPERANDS) } : {}) };
  }
  const doc: Record<string, unknown> = { _id: g.pick(['d', 'e']) };
  for (const field of ['a', 'b']) if (g.next() < 0.8) doc[field] = g.pick(VALUES);
  // Inherited names: the query engine reads only a document's own field there.
  for (const field of ['toString', 'constructor']) {
    if (g.next() < 0.05) filter[field] = { $exists: g.next() < 0.5 };
    if (g.next() < 0.05) doc[field] = g.pick(VALUES);
  }
  return { filter, doc };
}

describe('simple filters (decided without compiling a query)', () => {
  it('agree with mingo on every document they decide, over random filters and documents', () => {
    let decided = 0;
    for (let seed = 1; seed <= 5000; seed++) {
      const { filter, doc } = randomCase(seed);
      const test = compileSimpleFilter(filter);
      const verdict = test?.(doc);
      if (verdict === undefined) continue;
      decided++;
      expect(verdict, `seed ${seed}: ${JSON.stringify(filter)} on ${JSON.stringify(doc)}`).to.equal(new Query(filter).test(doc));
    }
    expect(decided).to.be.greaterThan(1000);
  });

  it('reads a filter as it is (isSimpleFilter, decideSimple) exactly as it compiles it, over random filters and documents', () => {
    let simple = 0;
    for (let seed = 1; seed <= 5000; seed++) {
      const { filter, doc } = randomCase(seed, ODD_FILTERS);
      const compiled = compileSimpleFilter(filter);
      const where = `seed ${seed}: ${JSON.stringify(filter)} on ${JSON.stringify(doc)}`;
      expect(isSimpleFilter(filter), where).to.equal(compiled !== undefined);
      if (!compiled) continue;
      simple++;
      expect(decideSimple(filter, doc), where).to.equal(compiled(doc));
    }
    expect(simple).to.be.greaterThan(3000);
  });

  it('decides $in over scalars, as MongoDB does (no coercion between types)', () => {
    const test = compileSimpleFilter({ _id: { $in: ['p1', 'p2'] }, n: { $in: [1, true] } })!;
    expect(test({ _id: 'p2', n: 1 })).to.equal(true);
    expect(test({ _id: 'p2', n: true })).to.equal(true);
    expect(test({ _id: 'p3', n: 1 })).to.equal(false);
    expect(test({ _id: 'p1', n: '1' })).to.equal(false);
    // An array field matches when an element is listed: the query engine's to decide.
    expect(test({ _id: ['p1'], n: 1 })).to.equal(undefined);
    expect(test({ _id: 'p1' })).to.equal(undefined);
  });

  it('leaves dotted paths, logical and other operators, and non-scalar operands to the query engine', () => {
    for (const filter of [{ a: {} }, { 'a.b': 1 }, { $or: [{ a: 1 }] }, { a: { $in: [] } }, { a: { $in: [1, null] } }, { a: { $in: [[1]] } }, { a: { $in: 'a' } }, { a: { $nin: [1] } }, { a: { $lt: null } }, { a: { $exists: 1 } }, JSON.parse('{"__proto__": {"$exists": true}}') as Filter, { a: [1] }, { a: null }, { a: { k: 1 } }, { a: new Date(0) }]) {
      expect(compileSimpleFilter(filter as Filter), JSON.stringify(filter)).to.equal(undefined);
    }
  });
});

describe('simple filters: a field named __proto__', () => {
  it('stays a condition when compiled (it is never the copy\'s prototype)', () => {
    const filter = JSON.parse('{"__proto__": "x", "a": 1}') as Filter;
    const test = compileSimpleFilter(filter);
    // The document holds no string there: the query engine decides, as for any other field.
    expect(test?.({ _id: 'd', a: 1 })).to.equal(undefined);
    expect(decideSimple(filter, { _id: 'd', a: 1 })).to.equal(undefined);
  });
});
