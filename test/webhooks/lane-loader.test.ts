import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { EmbeddedDocumentStore } from '../../src/infra/docstore/embedded/embedded-document-store.js';
import { DeliveryRepo } from '../../src/webhooks/deliveries/delivery-repo.js';
import { DELIVERIES, ensureDeliveryIndexes, type DeliveryDoc } from '../../src/webhooks/deliveries/documents.js';
import { HeldDeliveries, stubOf } from '../../src/webhooks/dispatch/held-deliveries.js';
import type { LaneOwnership } from '../../src/webhooks/dispatch/lane-claims.js';
import { LaneLoader } from '../../src/webhooks/dispatch/lane-loader.js';
import { Scheduler } from '../../src/webhooks/dispatch/scheduler.js';
import { waitFor } from '../support/sandbox.js';

const INSTANCES = 20;
const PER_INSTANCE = 3;
const ELSEWHERE = 'inst-other';

/** The delivery log's reads, counted: what the loader asks of the store per commit. */
class CountingRepo extends DeliveryRepo {
  perInstance = 0;
  batched = 0;
  override queued(instanceId: string, limit: number, afterSeq: number): Promise<DeliveryDoc[]> {
    this.perInstance++;
    return super.queued(instanceId, limit, afterSeq);
  }
  override queuedAfter(lanes: readonly { instanceId: string; afterSeq: number }[], limit: number): Promise<DeliveryDoc[]> {
    this.batched++;
    return super.queuedAfter(lanes, limit);
  }
}

const delivery = (instanceId: string, seq: number): DeliveryDoc =>
  ({
    _id: `evt_${instanceId}_${seq}`,
    event_id: `${instanceId}-${seq}`,
    instance_id: instanceId,
    seq,
    type: 'Message',
    pos: seq,
    url: 'https://hooks.example/x',
    host: 'https://hooks.example',
    body: '{}',
    state: 'queued',
    attempts: 0,
    last_status_code: null,
    last_error: null,
    created_at: new Date(0).toISOString(),
    delivered_at: null,
    next_attempt_at: null,
    due_ms: 0,
  }) as DeliveryDoc;

/**
 * Issue 34, item 3: with several nodes a commit is only a hint (the deliveries may have been
 * written by another node), so the lanes it names are read from the log; one read for all of them,
 * not one per instance, however many instances the node feeds.
 */
describe('webhook lane loader with several nodes: one read of the log per commit', () => {
  let dir: string;
  let docs: EmbeddedDocumentStore;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lane-loader-'));
    docs = await EmbeddedDocumentStore.open({ path: dir });
    await ensureDeliveryIndexes(docs);
  });
  afterEach(async () => {
    await docs.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Given these deliveries queued in the log and lanes holding `laneHeld` each, when a commit names them all. */
  async function commitAll(perLane: Map<string, number>, laneHeld: number, delivered: string[] = []) {
    const all = [...perLane].flatMap(([id, n]) => Array.from({ length: n }, (_, k) => delivery(id, k + 1)));
    for (const d of all) await docs.collection<DeliveryDoc>(DELIVERIES).insertOne(d);
    for (const id of delivered) await docs.collection<DeliveryDoc>(DELIVERIES).updateOne({ _id: id }, { $set: { state: 'delivered' } });
    const repo = new CountingRepo(docs);
    const scheduler = new Scheduler({ perInstance: 1, perHost: 1000, global: 1000, laneHeld, hostRetriesHeld: 10 });
    const wanted: string[] = [];
    const ownership: LaneOwnership = { owns: (id) => id !== ELSEWHERE, attemptSignal: () => new AbortController().signal, want: (id) => void wanted.push(id) };
    const loader = new LaneLoader(repo, scheduler, new HeldDeliveries(), pino({ level: 'silent' }), () => undefined, ownership, true);
    // Not started: its once-a-second sweep would read too; what a commit reads is what is counted.
    (loader as unknown as { stopped: boolean }).stopped = false;
    loader.committed(all);
    const mine = [...perLane.keys()].filter((id) => id !== ELSEWHERE);
    await waitFor(() => mine.every((id) => scheduler.lanes.get(id)?.loading === false && (scheduler.lanes.get(id)?.queue.length ?? 0) > 0), 'every lane read');
    return { repo, scheduler, wanted };
  }

  it('reads every lane the commit names in one query, each taking its own deliveries in seq order; lanes of other nodes are only wanted', async () => {
    const ids = Array.from({ length: INSTANCES }, (_, i) => `inst${String(i).padStart(2, '0')}`);
    const perLane = new Map([...ids.map((id) => [id, PER_INSTANCE] as const), ['inst-busy', 6], [ELSEWHERE, PER_INSTANCE]]);
    // One lane already delivered its first: it is read after it.
    const { repo, scheduler, wanted } = await commitAll(perLane, 4, [`evt_${ids[0]}_1`]);

    expect(repo.batched, 'reads of the log for the commit').to.equal(1);
    expect(repo.perInstance, 'reads of one instance each').to.equal(0);
    expect(wanted).to.deep.equal([ELSEWHERE]);
    expect(scheduler.lanes.has(ELSEWHERE)).to.equal(false);
    for (const id of ids) {
      expect(scheduler.lanes.get(id)!.queue.map((s) => s.seq), id).to.deep.equal(id === ids[0] ? [2, 3] : [1, 2, 3]);
      expect(scheduler.lanes.get(id)!.more, `${id} has all its deliveries`).to.equal(false);
    }
    // More than its room: it takes what fits, in order, and knows the log holds more.
    expect(scheduler.lanes.get('inst-busy')!.queue.map((s) => s.seq)).to.deep.equal([1, 2, 3, 4]);
    expect(scheduler.lanes.get('inst-busy')!.more).to.equal(true);
  });

  it('a read cut short by its limit reads the lanes it did not reach in the next query, still not one per instance', async () => {
    const ids = Array.from({ length: INSTANCES }, (_, i) => `inst${String(i).padStart(2, '0')}`);
    // Room for two per lane and three queued each: the first query fills its limit before the last lanes.
    const { repo, scheduler } = await commitAll(new Map(ids.map((id) => [id, PER_INSTANCE] as const)), 2);
    expect(repo.perInstance).to.equal(0);
    // Each query fills its limit with about two thirds of the lanes it names: a few queries, never one per lane.
    expect(repo.batched).to.be.within(2, 5);
    for (const id of ids) {
      expect(scheduler.lanes.get(id)!.queue.map((s) => s.seq), id).to.deep.equal([1, 2]);
      expect(scheduler.lanes.get(id)!.more, id).to.equal(true);
    }
  });

  it('stops a lane before a delivery this node still holds from an earlier hold of the lane, and reads on once it is let go', async () => {
    const queued = [...[1, 2, 3, 4, 5, 6].map((seq) => delivery('inst-a', seq)), delivery('inst-b', 1), delivery('inst-b', 2)];
    for (const d of queued) await docs.collection<DeliveryDoc>(DELIVERIES).insertOne(d);
    const repo = new CountingRepo(docs);
    const scheduler = new Scheduler({ perInstance: 1, perHost: 1000, global: 1000, laneHeld: 8, hostRetriesHeld: 10 });
    const known = new HeldDeliveries();
    // Its attempt under the lane's earlier hold was aborted when the claim lapsed, and has not ended yet.
    const hung = stubOf(delivery('inst-a', 2));
    known.hold(hung);
    const ownership: LaneOwnership = { owns: () => true, attemptSignal: () => new AbortController().signal, want: () => undefined };
    const loader = new LaneLoader(repo, scheduler, known, pino({ level: 'silent' }), () => undefined, ownership, true);
    (loader as unknown as { stopped: boolean }).stopped = false;
    const [a, b] = [scheduler.lane('inst-a'), scheduler.lane('inst-b')];

    await loader.refillMany([a, b]);
    expect(repo.batched, 'one read for both lanes').to.equal(1);
    expect(a.queue.map((s) => s.seq), 'not past the held one').to.deep.equal([1]);
    expect(a.more).to.equal(true);
    expect(b.queue.map((s) => s.seq)).to.deep.equal([1, 2]);

    // The attempt ends with nothing recorded: the delivery is still queued in the log, and the lane reads on from it.
    known.release(hung);
    loader.released(hung);
    await waitFor(() => a.queue.length === 6 && !a.loading, 'the lane read on');
    expect(a.queue.map((s) => s.seq)).to.deep.equal([1, 2, 3, 4, 5, 6]);
    expect(a.more).to.equal(false);
  });
});
