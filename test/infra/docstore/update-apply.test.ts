import { expect } from 'chai';
import { update as mingoUpdate } from 'mingo';
import type { Modifier } from 'mingo/updater';
import { applyUpdate, assertUpdate } from '../../../src/infra/docstore/embedded/update-apply.js';
import { compareValues } from '../../../src/infra/docstore/embedded/value-order.js';
import type { Document, Update } from '../../../src/infra/docstore/port.js';

/** A small deterministic generator, so a failure names the seed that shows it. */
function generator(seed: number) {
  let s = seed >>> 0;
  const next = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)] as T;
  const value = (depth = 0): unknown =>
    pick([
      () => Math.floor(next() * 5) - 2,
      () => next() * 10,
      () => pick(['', 'a', 'b', 'ü']),
      () => next() < 0.5,
      () => null,
      () => new Date(Math.floor(next() * 3) * 1000),
      () => (depth > 1 ? 1 : [value(depth + 1), value(depth + 1)]),
      () => (depth > 1 ? 'x' : { k: value(depth + 1) }),
    ])();
  return { next, pick, value };
}

const FIELDS = ['a', 'b', 'c', 'd'] as const;

/** What the generic path computes: mingo applies the operators to a copy; changed is any difference. */
function reference(doc: Document, update: Update): { doc: Document; changed: boolean } {
  const next = structuredClone(doc);
  const { $setOnInsert: _ignored, ...operators } = update;
  if (Object.keys(operators).length > 0) mingoUpdate(next, operators as Modifier<Record<string, unknown>>);
  return { doc: next, changed: compareValues(doc, next) !== 0 };
}

describe('update application (the fast path for top-level $set, $unset, $inc, $max)', () => {
  it('computes what mingo computes, field order and the changed flag included, on random updates', () => {
    for (let seed = 1; seed <= 3000; seed++) {
      const g = generator(seed);
      const doc: Document = { _id: 'd' };
      for (const f of FIELDS) if (g.next() < 0.6) doc[f] = g.value();
      const update: Update = {};
      const used = new Set<string>();
      for (const op of ['$set', '$unset', '$inc', '$max', '$setOnInsert'] as const) {
        if (g.next() < 0.5) continue;
        const fields: Record<string, unknown> = {};
        for (const f of FIELDS) {
          if (g.next() < 0.5 || used.has(f)) continue;
          used.add(f);
          // $max mostly of numbers (the fast path's), some of other values (mingo's path).
          fields[f] = op === '$inc' ? g.pick([0, 1, -2, 2.5]) : op === '$max' ? (g.next() < 0.8 ? g.pick([-3, 0, 1, 2.5, 7]) : g.value()) : op === '$unset' ? '' : g.value();
        }
        update[op] = fields;
      }
      if (Object.keys(update).length === 0) update.$set = { a: g.value() };
      let expected: { doc: Document; changed: boolean } | Error;
      try {
        expected = reference(doc, update);
      } catch (err) {
        expected = err as Error;
      }
      let actual: { doc: Document; changed: boolean } | Error;
      try {
        actual = applyUpdate(structuredClone(doc), update);
      } catch (err) {
        actual = err as Error;
      }
      const context = `seed ${seed}: ${JSON.stringify(doc)} ${JSON.stringify(update)}`;
      if (expected instanceof Error) {
        expect(actual, context).to.be.instanceOf(Error);
        continue;
      }
      expect(actual, context).not.to.be.instanceOf(Error);
      const got = actual as { doc: Document; changed: boolean };
      expect(Object.keys(got.doc), context).to.deep.equal(Object.keys(expected.doc));
      expect(got.doc, context).to.deep.equal(expected.doc);
      expect(got.changed, context).to.equal(expected.changed);
    }
  });

  it('computes what mingo computes for a counter one level down (the stats histogram), and leaves the original alone', () => {
    for (let seed = 1; seed <= 2000; seed++) {
      const g = generator(seed);
      const doc: Document = { _id: 'd' };
      if (g.next() < 0.7) doc.h = g.pick([() => ({}), () => ({ '3': 2, x: 1 }), () => ({ '3': 'no' }), () => [1, 2], () => 5, () => null])();
      if (g.next() < 0.5) doc.n = 1;
      const inc: Record<string, number> = {};
      for (const f of ['h.3', 'h.x', 'h.12', 'n']) if (g.next() < 0.5) inc[f] = g.pick([0, 1, -2, 2.5]);
      if (Object.keys(inc).length === 0) inc['h.3'] = 1;
      const update: Update = { $inc: inc, $setOnInsert: { s: 1 } };
      const original = structuredClone(doc);
      const context = `seed ${seed}: ${JSON.stringify(doc)} ${JSON.stringify(update)}`;
      let expected: { doc: Document; changed: boolean } | Error;
      try {
        expected = reference(doc, update);
      } catch (err) {
        expected = err as Error;
      }
      let actual: { doc: Document; changed: boolean } | Error;
      try {
        actual = applyUpdate(doc, update);
      } catch (err) {
        actual = err as Error;
      }
      expect(doc, context).to.deep.equal(original);
      if (expected instanceof Error) {
        expect(actual, context).to.be.instanceOf(Error);
        continue;
      }
      expect(actual, context).not.to.be.instanceOf(Error);
      const got = actual as { doc: Document; changed: boolean };
      expect(got.doc, context).to.deep.equal(expected.doc);
      expect(got.changed, context).to.equal(expected.changed);
    }
  });

  it('leaves the document it was given unchanged', () => {
    const doc: Document = { _id: 'd', n: 1, o: { k: 1 } };
    const { doc: next } = applyUpdate(doc, { $set: { o: { k: 2 } }, $inc: { n: 1 }, $unset: { gone: '' } });
    expect(doc).to.deep.equal({ _id: 'd', n: 1, o: { k: 1 } });
    expect(next).to.deep.equal({ _id: 'd', n: 2, o: { k: 2 } });
  });

  it('refuses two operators on one path, as MongoDB does', () => {
    expect(() => assertUpdate({ $set: { n: 2 }, $inc: { n: 1 } })).to.throw(/conflict at 'n'/);
  });

  it('agrees with mingo on fields named like Object.prototype members, _id, undefined values and $inc of a non-number', () => {
    const doc: Document = { _id: 'd', n: 1 };
    for (const update of [
      { $set: { constructor: 1 } },
      { $unset: { toString: '' } },
      { $set: { x: undefined } },
      { $inc: { n: 'one' } },
      { $inc: { s: 1 } },
      { $max: { s: 1 } },
      { $max: { n: 0 } },
      { $max: { n: 1 } },
      { $max: { n: 2, m: -1 } },
      { $max: { n: Number.NaN } },
      { $max: { constructor: 1 } },
    ] as Update[]) {
      const outcome = (f: () => unknown) => {
        try {
          return f();
        } catch (err) {
          return { threw: (err as Error).message };
        }
      };
      const withText = { ...doc, s: 'text' };
      expect(outcome(() => applyUpdate(structuredClone(withText), update)), JSON.stringify(update)).to.deep.equal(outcome(() => reference(withText, update)));
    }
    expect(() => applyUpdate({ _id: 'd' }, { $unset: { _id: '' } })).to.throw(/_id/);
    // mingo takes the inherited valueOf for an existing field and skips the $inc; MongoDB (and
    // this store) see no such field and create it.
    expect(applyUpdate(structuredClone(doc), { $inc: { valueOf: 1 } })).to.deep.equal({ doc: { _id: 'd', n: 1, valueOf: 1 }, changed: true });
  });
});
