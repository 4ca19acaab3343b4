import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { update as mingoUpdate } from 'mingo';
import type { Modifier } from 'mingo/updater';
import { EmbeddedDocumentStore } from '../../src/infra/docstore/embedded/embedded-document-store.js';
import { upsertDocument } from '../../src/infra/docstore/embedded/update-apply.js';
import type { Document, Filter, Update, WriteOp } from '../../src/infra/docstore/port.js';
import { StagedFold } from '../../src/rebuild/staged-fold.js';

/** A small deterministic generator, so a failure replays. */
function random(seed: number) {
  let s = seed;
  const next = () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  return { int: (n: number) => Math.floor(next() * n), pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)] as T };
}

const INSTANCES = ['i1', 'i2', 'i3'];
const JIDS = ['a@s', 'b@s', 'c@lid', 'd@g', 'e\u0000x'];

/** The writes the chats projection makes, and some it does not (arrays where strings are indexed). */
function chatOps(seed: number, count: number): WriteOp[] {
  const r = random(seed);
  const ops: WriteOp[] = [];
  for (let i = 0; i < count; i++) {
    const instance_id = r.pick(INSTANCES);
    const jid = r.pick(JIDS);
    switch (r.int(8)) {
      case 0:
      case 1:
        ops.push({ collection: 'chats', op: 'updateOne', filter: { instance_id, jid }, update: { $setOnInsert: { _id: `${instance_id}:${jid}`, name: '', n: 0 } }, upsert: true });
        break;
      case 2:
        ops.push({ collection: 'chats', op: 'updateOne', filter: { instance_id, jid, n: { $lt: i } }, update: { $set: { n: i, last: `m${i}` } } });
        break;
      case 3:
        ops.push({ collection: 'chats', op: 'updateOne', filter: { _id: `${instance_id}:${jid}` }, update: { $inc: { unread: 1 } } });
        break;
      case 4:
        // A chat first seen by one jid answers to another from then on.
        ops.push({ collection: 'chats', op: 'updateOne', filter: { _id: `${instance_id}:${jid}` }, update: { $set: { jid: r.pick(JIDS) } } });
        break;
      case 5:
        ops.push({ collection: 'chats', op: 'updateMany', filter: { instance_id, jid }, update: { $set: { lid: `l${i}` } } });
        break;
      case 6:
        ops.push({ collection: 'chats', op: r.int(2) ? 'deleteOne' : 'deleteMany', filter: r.int(3) ? { instance_id, jid } : { instance_id } });
        break;
      default:
        // An array where the index expects a string: equality still matches an element.
        ops.push({ collection: 'chats', op: 'replaceOne', filter: { _id: `x${i % 5}` }, doc: { _id: `x${i % 5}`, instance_id, jid: [jid, 'z@s'] }, upsert: true });
    }
  }
  return ops;
}

describe('the rebuild folding in memory', () => {
  let dir: string;
  let store: EmbeddedDocumentStore;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rebuild-fold-'));
    store = await EmbeddedDocumentStore.open({ path: join(dir, 'docs') });
  });
  after(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('ends with the documents the document store ends with, whatever the writes (hash indexes included)', async function () {
    // 4,800 batches written to the store: 5 s on a quiet machine, over 20 s beside other suites.
    this.timeout(180_000);
    for (let seed = 1; seed <= 12; seed++) {
      const ops = chatOps(seed, 400);
      const fold = new StagedFold();
      const collection = `chats_${seed}`;
      for (const op of ops) {
        // An upsert of an _id taken by a chat now known by another jid fails in both, changing nothing.
        let folded: unknown = null;
        let stored: unknown = null;
        try {
          fold.apply(op);
        } catch (err) {
          folded = err;
        }
        await store.batch([{ ...op, collection }]).catch((err: unknown) => (stored = err));
        expect(folded === null, `seed ${seed}: ${JSON.stringify(op)} ${String(folded)} ${String(stored)}`).to.equal(stored === null);
      }
      const stored = await store.collection(collection).find({}, { sort: { _id: 1 } });
      const folded = [...fold.collections()].flatMap(([, docs]) => [...docs]).sort((a, b) => (a._id < b._id ? -1 : a._id > b._id ? 1 : 0));
      expect(folded, `seed ${seed}`).to.deep.equal(stored);
    }
  });

  it('builds a simple upsert as mingo builds it, field order included', () => {
    const r = random(7);
    const fields = ['a', 'b', 'c', 'instance_id', 'jid', 'constructor', 'toString'];
    const orders = [
      ['$set', '$inc', '$setOnInsert'],
      ['$inc', '$set', '$setOnInsert'],
      ['$set', '$unset', '$inc', '$setOnInsert'],
      ['$unset', '$set', '$setOnInsert'],
      // The messages model's upserts: a status rank raised with $max beside $set and $setOnInsert.
      ['$set', '$max', '$setOnInsert'],
      ['$set', '$setOnInsert', '$max'],
      ['$max', '$set', '$setOnInsert'],
      ['$set', '$inc', '$max', '$setOnInsert'],
    ];
    for (let i = 0; i < 3000; i++) {
      // Most upserts name their _id in the filter; some in $setOnInsert, some nowhere (a new one).
      const filter: Filter = r.int(4) ? { _id: `d${i}` } : {};
      // Names of Object.prototype members send an upsert to mingo's path: in a quarter of them only.
      const names = r.int(4) === 0 ? fields : fields.slice(0, 5);
      for (const f of names) if (r.int(4) === 0) filter[f] = r.pick(['x', 'y', 1, 2.5, true]);
      const update: Update = {};
      const used = new Set(['_id']);
      for (const op of r.pick(orders)) {
        const part: Record<string, unknown> = {};
        for (const f of names) {
          if (used.has(f) || r.int(3) !== 0) continue;
          used.add(f);
          part[f] = op === '$inc' ? r.pick([1, -2, 0.5]) : op === '$max' ? r.pick([3, -1, 0, 2.5, 'v']) : op === '$unset' ? '' : r.pick(['v', 3, false, { nested: 1 }, [1, 2]]);
        }
        if (Object.keys(part).length > 0) update[op] = part;
      }
      if (r.int(5) === 0) update.$setOnInsert = { ...update.$setOnInsert, _id: filter._id ?? `s${i}` };
      // What upsertDocument's general path computes: the filter's equalities, mingo's operators, then $setOnInsert.
      const { $setOnInsert, ...operators } = update;
      const { _id: chosen, ...onInsert } = ($setOnInsert ?? {}) as Record<string, unknown>;
      const seed: Record<string, unknown> = structuredClone(filter);
      if (Object.keys(operators).length > 0) mingoUpdate(seed, operators as Modifier<Record<string, unknown>>);
      if (Object.keys(onInsert).length > 0) mingoUpdate(seed, { $set: onInsert } as Modifier<Record<string, unknown>>);
      const { _id, ...rest } = seed as Document;
      const built = upsertDocument(filter, update);
      const id = _id ?? chosen;
      if (id === undefined) expect(built._id, JSON.stringify({ filter, update })).to.match(/^[0-9a-f]{24}$/);
      const expected = { _id: id ?? built._id, ...rest };
      expect(JSON.stringify(built), JSON.stringify({ filter, update })).to.equal(JSON.stringify(expected));
    }
  });
});
