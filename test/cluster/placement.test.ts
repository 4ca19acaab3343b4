import { expect } from 'chai';
import { placeItems } from '../../src/cluster/placement.js';

const ids = (n: number) => Array.from({ length: n }, (_, i) => `inst-${String(i).padStart(4, '0')}-${(i * 7919).toString(36)}`);
const loads = (placed: Map<string, string>) => {
  const out = new Map<string, number>();
  for (const node of placed.values()) out.set(node, (out.get(node) ?? 0) + 1);
  return out;
};

/** Balanced rendezvous hashing: every node computes the same placement, exactly balanced, moving few items when nodes change. */
describe('placement of sessions and lanes over the live nodes', () => {
  it('gives each of three nodes 20 of 60 items, the same whatever order the items and nodes are read in', () => {
    const items = ids(60);
    const nodes = ['node-a', 'node-b', 'node-c'];
    const placed = placeItems(items, nodes);
    expect([...loads(placed).values()]).to.deep.equal([20, 20, 20]);
    expect(placeItems([...items].reverse(), [...nodes].reverse())).to.deep.equal(placed);
  });

  it('never puts more than ceil(total / nodes) on a node, for uneven counts too', () => {
    for (const [n, k] of [[61, 3], [7, 2], [100, 7], [1, 3]] as const) {
      const nodes = Array.from({ length: k }, (_, i) => `n${i}`);
      const placed = placeItems(ids(n), nodes);
      expect(placed.size).to.equal(n);
      for (const load of loads(placed).values()) expect(load).to.be.at.most(Math.ceil(n / k));
    }
  });

  it("moves only about the leaving node's share when one of three dies, and back when it returns", () => {
    const items = ids(60);
    const three = placeItems(items, ['node-a', 'node-b', 'node-c']);
    const two = placeItems(items, ['node-a', 'node-b']);
    expect([...loads(two).values()]).to.deep.equal([30, 30]);
    const moved = items.filter((i) => three.get(i) !== 'node-c' && three.get(i) !== two.get(i)).length;
    // The 20 of the dead node must move; of the 40 others, a few may (the cap), not most.
    expect(moved).to.be.below(12);
    expect(placeItems(items, ['node-a', 'node-b', 'node-c'])).to.deep.equal(three);
  });
});
