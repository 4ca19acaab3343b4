import { expect } from 'chai';
import { readLanes, type LaneRead, type LanesQuery } from '../../src/webhooks/dispatch/lane-reads.js';

interface Doc {
  instance_id: string;
  seq: number;
}

interface Read extends LaneRead {
  lane: number;
}

/** A small deterministic generator: the same cases on every run. */
function random(seed: number): (n: number) => number {
  let s = seed;
  return (n) => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s % n;
  };
}

/** The log as MongoDB answers the one query: each instance's entries after its seq, by instance then seq, `limit` in all. */
function logOf(docs: readonly Doc[]): { query: LanesQuery<Doc>; queries: number } {
  const counted = {
    queries: 0,
    query: async (instances: readonly LaneRead[], limit: number) => {
      counted.queries++;
      const after = new Map(instances.map((i) => [i.instanceId, i.afterSeq]));
      return docs
        .filter((d) => after.has(d.instance_id) && d.seq > (after.get(d.instance_id) as number))
        .sort((a, b) => (a.instance_id < b.instance_id ? -1 : a.instance_id > b.instance_id ? 1 : a.seq - b.seq))
        .slice(0, limit);
    },
  };
  return counted;
}

/**
 * The read the webhook and export lanes share (issue 34): several lanes, some of one instance at
 * different places (an export's two sinks), read in one query; each lane handed what a read of its
 * own would have handed it, in order and from its own place, never an entry skipped.
 */
describe('lane reads: many lanes of a log in one query', () => {
  it('hands each lane the start of what its own read would give, all of it unless it is told there is more, in a few queries', async () => {
    const next = random(34);
    for (let trial = 0; trial < 300; trial++) {
      const instances = Array.from({ length: 1 + next(6) }, (_, i) => `inst${i}`);
      const docs = instances.flatMap((id) => Array.from({ length: next(12) }, (_, k) => ({ instance_id: id, seq: k + 1 })));
      const reads: Read[] = [];
      for (const id of instances) for (let sink = 0; sink < 1 + next(2); sink++) reads.push({ lane: reads.length, instanceId: id, afterSeq: next(8), room: 1 + next(5) });
      const got = new Map<number, { docs: Doc[]; more: boolean }>();
      const log = logOf(docs);
      await readLanes(reads, log.query, (read, handed, more) => {
        const seen = got.get(read.lane);
        // A second handing (the rest of a read the limit cut) follows the first, from where it stopped.
        expect(read.afterSeq, `trial ${trial} lane ${read.lane} read from`).to.equal(seen?.docs.at(-1)?.seq ?? reads[read.lane]!.afterSeq);
        got.set(read.lane, { docs: [...(seen?.docs ?? []), ...handed], more });
        return true;
      });
      for (const read of reads) {
        const own = docs.filter((d) => d.instance_id === read.instanceId && d.seq > read.afterSeq);
        const { docs: handed, more } = got.get(read.lane) ?? { docs: [], more: true };
        const what = `trial ${trial} lane ${read.lane} (${read.instanceId} after ${read.afterSeq}, room ${read.room})`;
        expect(got.has(read.lane), `${what} answered`).to.equal(true);
        expect(handed, what).to.deep.equal(own.slice(0, handed.length));
        expect(handed.length, what).to.be.at.most(read.room);
        if (handed.length < Math.min(own.length, read.room)) expect(more, `${what} told there is more`).to.equal(true);
        if (own.length > handed.length) expect(more, `${what} told there is more`).to.equal(true);
      }
      expect(log.queries, `trial ${trial} queries`).to.be.at.most(instances.length + 1);
    }
  });

  it('two lanes of one instance a batch apart (a sink behind the other) share its read: one query, each from its own place', async () => {
    const docs = [1, 2, 3, 4, 5].map((seq) => ({ instance_id: 'a', seq }));
    const log = logOf(docs);
    const got = new Map<number, { seqs: number[]; more: boolean }>();
    const reads: Read[] = [
      { lane: 0, instanceId: 'a', afterSeq: 0, room: 3 },
      { lane: 1, instanceId: 'a', afterSeq: 3, room: 3 },
    ];
    await readLanes(reads, log.query, (read, handed, more) => (got.set(read.lane, { seqs: handed.map((d) => d.seq), more }), true));
    expect(log.queries).to.equal(1);
    expect(got.get(0)).to.deep.equal({ seqs: [1, 2, 3], more: true });
    expect(got.get(1)).to.deep.equal({ seqs: [4, 5], more: false });
  });
});
