import { expect } from 'chai';
import { jsonCopy } from '../../src/infra/eventstore/embedded/json-copy.js';

const roundTrip = (value: unknown): unknown => JSON.parse(JSON.stringify(value)) as unknown;

/** Values the walk copies and values it must leave to the round trip, mixed at random depths. */
function randomValue(random: (n: number) => number, depth: number): unknown {
  const leaves: (() => unknown)[] = [
    () => 'text ünï 👋',
    () => '\ud800 lone surrogate',
    () => random(1000) - 500,
    () => 0.1 + random(10) / 7,
    () => 2 ** 60,
    () => true,
    () => null,
    // Not plain JSON: each changes or vanishes in the round trip.
    () => undefined,
    () => NaN,
    () => -Infinity,
    () => -0,
    () => new Date(Date.UTC(2024, 4, 1)),
    () => Buffer.from('bytes'),
    () => new Map([['k', 1]]),
    () => ({ toJSON: () => 'custom' }),
    () => () => 'a function',
    () => Symbol('s'),
    () => Object.create(null) as object,
    () => Object.assign(Object.create({ inherited: 1 }) as object, { own: 2 }),
    () => [1, , 3], // eslint-disable-line no-sparse-arrays
    () => JSON.parse('{"__proto__": {"polluted": true}, "x": 1}') as unknown,
  ];
  if (depth > 3 || random(3) === 0) {
    // Mostly plain leaves, so that most values take the walk all the way.
    const leaf = random(4) === 0 ? (leaves[random(leaves.length)] as () => unknown) : (leaves[random(7)] as () => unknown);
    return leaf();
  }
  if (random(2) === 0) return Array.from({ length: random(4) }, () => randomValue(random, depth + 1));
  const object: Record<string, unknown> = {};
  for (let i = random(5); i > 0; i--) object[['a', 'b', '2', '10', 'é', ''][random(6)] as string] = randomValue(random, depth + 1);
  return object;
}

describe('jsonCopy (the JSON form of event data, without the string round trip when it is plain)', () => {
  it('gives exactly what JSON.parse(JSON.stringify()) gives, for plain and awkward values alike', () => {
    let seed = 3;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return (seed >>> 16) % n;
    };
    for (let i = 0; i < 3000; i++) {
      const value = { data: randomValue(random, 0) };
      const copy = jsonCopy(value);
      expect(copy, JSON.stringify(value)).to.deep.equal(roundTrip(value));
      // Same key order as well, and a prototype the round trip would give.
      expect(JSON.stringify(copy)).to.equal(JSON.stringify(value));
    }
  });

  it('copies: changing the original afterwards leaves the copy alone', () => {
    const value = { a: { list: [1, { b: 2 }] } };
    const copy = jsonCopy(value) as typeof value;
    (value.a.list[1] as { b: number }).b = 3;
    value.a.list.push(4);
    expect(copy).to.deep.equal({ a: { list: [1, { b: 2 }] } });
  });

  it('keeps a __proto__ key as an own property, as JSON.parse does, and throws on a cycle as the round trip does', () => {
    const polluted = jsonCopy(JSON.parse('{"__proto__": {"x": 1}}')) as Record<string, unknown>;
    expect(Object.getPrototypeOf(polluted)).to.equal(Object.prototype);
    expect(Object.keys(polluted)).to.deep.equal(['__proto__']);
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(() => jsonCopy(cycle)).to.throw(TypeError);
    expect(() => jsonCopy({ n: 1n })).to.throw(TypeError);
  });
});
