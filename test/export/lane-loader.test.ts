import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { EXPORT_OUTBOX, ensureExportIndexes, type OutboxDoc, type SinkKind } from '../../src/export/documents.js';
import type { ExportKeys } from '../../src/export/export-keys.js';
import { ExportLanes } from '../../src/export/export-lanes.js';
import { ExportRepo } from '../../src/export/export-repo.js';
import type { ExportMessage, PublishOutcome, Sink } from '../../src/export/sinks/port.js';
import { systemClock } from '../../src/infra/clock.js';
import { EmbeddedDocumentStore } from '../../src/infra/docstore/embedded/embedded-document-store.js';
import type { LaneOwnership } from '../../src/webhooks/dispatch/lane-claims.js';
import { OutcomeWriter } from '../../src/webhooks/dispatch/outcome-writer.js';
import { waitFor } from '../support/sandbox.js';

const INSTANCES = 10;
const ELSEWHERE = 'inst-other';
const logger = pino({ level: 'silent' });
/** Every gate a test held, opened after it whatever happened (the lanes stop only once their publishes end). */
const releases: (() => void)[] = [];

/** The outbox's reads, counted: what the lanes ask of the store per commit. */
class CountingRepo extends ExportRepo {
  perInstance = 0;
  batched = 0;
  get reads(): number {
    return this.perInstance + this.batched;
  }
  override after(instanceId: string, afterSeq: number, limit: number): Promise<OutboxDoc[]> {
    this.perInstance++;
    return super.after(instanceId, afterSeq, limit);
  }
  // Not there before issue 34: the old lanes never call it.
  override afterMany(instances: readonly { instanceId: string; afterSeq: number }[], limit: number): Promise<OutboxDoc[]> {
    this.batched++;
    return super.afterMany(instances, limit);
  }
}

/** A broker that confirms what it is given (recorded per instance), held at a gate or failing when a test says so. */
class FakeSink implements Sink {
  readonly ready = true;
  readonly lastError = null;
  readonly confirmed = new Map<string, number[]>();
  /** Each publish waits for this, when set; `waiting`: publishes held there. */
  private gate: Promise<void> | null = null;
  waiting = 0;
  /** Publishes that failed. */
  failures = 0;
  /** The next publish confirms this many, then fails (the broker went away). */
  failNextAfter: number | null = null;
  constructor(readonly kind: SinkKind) {}
  /** Publishes wait until the returned function is called. */
  hold(): () => void {
    let open = () => undefined as void;
    this.gate = new Promise<void>((resolve) => (open = resolve));
    releases.push(open);
    return () => {
      this.gate = null;
      open();
    };
  }
  start(): void {}
  async stop(): Promise<void> {}
  onReady(): void {}
  async publish(messages: readonly ExportMessage[]): Promise<PublishOutcome> {
    this.waiting++;
    await this.gate;
    this.waiting--;
    const upTo = this.failNextAfter ?? messages.length;
    this.failNextAfter = null;
    for (const m of messages.slice(0, upTo)) this.confirmed.set(m.instanceId, [...(this.confirmed.get(m.instanceId) ?? []), m.seq]);
    if (upTo < messages.length) this.failures++;
    return upTo < messages.length ? { published: upTo, failure: { message: 'connection closed', permanent: false } } : { published: upTo };
  }
}

const entry = (instanceId: string, seq: number): OutboxDoc => ({ _id: `evt_${instanceId}_${seq}`, instance_id: instanceId, seq, type: 'Message', body: '{}', at_ms: 0 });

/**
 * Issue 34, item 3, for the event export: a commit naming several instances, each exported to two
 * brokers, is read from the outbox once for all its lanes (as the webhook lane loader reads the
 * delivery log), not once per lane and again to find it empty; order per lane and at-least-once
 * (the cursor moves only past what the broker confirmed) unchanged.
 */
describe('export lanes: one read of the outbox per commit for every lane it names', () => {
  let dir: string;
  let docs: EmbeddedDocumentStore;
  let lanes: ExportLanes | undefined;
  const ids = Array.from({ length: INSTANCES }, (_, i) => `inst${String(i).padStart(2, '0')}`);

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'export-lanes-'));
    docs = await EmbeddedDocumentStore.open({ path: dir });
    await ensureExportIndexes(docs);
  });
  afterEach(async () => {
    for (const open of releases.splice(0)) open();
    await lanes?.stop();
    lanes = undefined;
    await docs.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Lanes for every instance on both sinks, each with its cursor read and idle: what a commit then reads is what is counted. */
  async function idleLanes(shared: boolean) {
    const repo = new CountingRepo(docs);
    const sinks = [new FakeSink('amqp'), new FakeSink('nats')];
    const wanted: string[] = [];
    const stop = new AbortController();
    const ownership: LaneOwnership = { owns: (id) => id !== ELSEWHERE, attemptSignal: () => stop.signal, want: (id) => void wanted.push(id) };
    const keys = { forInstance: async () => Buffer.from('key'), forget: () => undefined } as unknown as ExportKeys;
    const meter = { published: () => undefined, failed: () => undefined, skipped: () => undefined };
    lanes = new ExportLanes({ repo, writer: new OutcomeWriter(docs, logger), sinks, keys, clock: systemClock, logger, ownership, meter, batch: 4, retryMaxMs: 50, shared });
    // Not started: its sweep would read too. Every lane gained, as after a start.
    (lanes as unknown as { stopped: boolean }).stopped = false;
    for (const id of ids) lanes.gained(id);
    const states = () => [...(lanes as unknown as { lanes: Map<string, Map<string, { cursor: number | null; running: boolean }>> }).lanes.values()].flatMap((m) => [...m.values()]);
    await waitFor(() => states().length === INSTANCES * sinks.length && states().every((l) => l.cursor !== null && !l.running), 'every lane idle');
    repo.perInstance = 0;
    repo.batched = 0;
    return { repo, sinks, wanted, lanes, idle: () => states().every((l) => !l.running), publishedUpTo: (seq: number) => states().every((l) => l.cursor === seq && !l.running) };
  }

  async function queue(instances: readonly string[], seqs: readonly number[]) {
    for (const id of instances) for (const seq of seqs) await docs.collection<OutboxDoc>(EXPORT_OUTBOX).insertOne(entry(id, seq));
  }

  const allConfirmed = (sinks: FakeSink[], upTo: number) => sinks.every((s) => ids.every((id) => (s.confirmed.get(id)?.length ?? 0) >= upTo));

  it('several nodes: one query for all the lanes a commit names, each sink publishing each instance in seq order; lanes of other nodes are only wanted', async () => {
    const { repo, sinks, wanted, lanes, idle } = await idleLanes(true);
    await queue([...ids, ELSEWHERE], [1, 2, 3]);
    lanes.recorded([...ids, ELSEWHERE]);
    await waitFor(() => allConfirmed(sinks, 3) && idle(), 'every lane published');

    expect(repo.reads, 'reads of the outbox for the commit').to.equal(1);
    expect(repo.batched, 'in one query for all').to.equal(1);
    expect(wanted).to.deep.equal([ELSEWHERE]);
    for (const sink of sinks) {
      for (const id of ids) expect(sink.confirmed.get(id), `${sink.kind} ${id}`).to.deep.equal([1, 2, 3]);
      expect(sink.confirmed.has(ELSEWHERE)).to.equal(false);
    }
  });

  it('several nodes: a commit while the lanes publish is read once too, the lanes publishing it from what they read', async () => {
    const { repo, sinks, lanes, idle } = await idleLanes(true);
    const opens = sinks.map((s) => s.hold());
    await queue(ids, [1, 2]);
    lanes.recorded(ids);
    await waitFor(() => sinks.every((s) => s.waiting === INSTANCES), 'every lane publishing the first commit');
    await queue(ids, [3, 4, 5]);
    lanes.recorded(ids);
    for (const open of opens) open();
    await waitFor(() => allConfirmed(sinks, 5) && idle(), 'every lane published');

    expect(repo.reads, 'reads of the outbox for two commits').to.equal(2);
    expect(repo.batched).to.equal(2);
    for (const sink of sinks) for (const id of ids) expect(sink.confirmed.get(id), `${sink.kind} ${id}`).to.deep.equal([1, 2, 3, 4, 5]);
  });

  it('a publish that fails midway goes again from the cursor, what was read after it neither lost nor sent ahead of it', async () => {
    const { sinks, lanes, publishedUpTo } = await idleLanes(true);
    const [amqp, nats] = sinks as [FakeSink, FakeSink];
    const open = amqp.hold();
    amqp.failNextAfter = 1;
    await queue(ids, [1, 2, 3]);
    lanes.recorded(ids);
    await waitFor(() => allConfirmed([nats], 3), 'nats published');
    // Read while the failing batch is out: it follows the failed one, after it.
    await queue(ids, [4, 5, 6]);
    lanes.recorded(ids);
    await waitFor(() => allConfirmed([nats], 6), 'nats published the second commit');
    open();
    await waitFor(() => publishedUpTo(6), 'amqp published after its failure');

    // One lane's batch confirmed 1 and failed: 2 onwards went again, in order, nothing skipped.
    expect(amqp.failures).to.equal(1);
    for (const sink of sinks) for (const id of ids) expect(sink.confirmed.get(id), `${sink.kind} ${id}`).to.deep.equal([1, 2, 3, 4, 5, 6]);
    await lanes.stop();
    for (const id of ids) for (const kind of ['amqp', 'nats'] as const) expect(await new ExportRepo(docs).publishedSeq(kind, id), `${kind} ${id} cursor`).to.equal(6);
  });

  it('one node (the embedded store): one read per instance the commit names, shared by its sinks', async () => {
    const { repo, sinks, lanes, idle } = await idleLanes(false);
    await queue(ids, [1, 2, 3]);
    lanes.recorded(ids);
    await waitFor(() => allConfirmed(sinks, 3) && idle(), 'every lane published');

    expect(repo.reads, 'reads of the outbox for the commit').to.equal(INSTANCES);
    for (const sink of sinks) for (const id of ids) expect(sink.confirmed.get(id), `${sink.kind} ${id}`).to.deep.equal([1, 2, 3]);
  });
});
