import type { Clock } from '../infra/clock.js';
import type { Logger } from '../infra/logging/logger.js';
import type { LaneOwnership } from '../webhooks/dispatch/lane-claims.js';
import type { OutcomeWriter } from '../webhooks/dispatch/outcome-writer.js';
import { signedHeaders } from '../webhooks/signing.js';
import type { SinkKind } from './documents.js';
import type { ExportKeys } from './export-keys.js';
import { ExportLoader, type SinkLane } from './export-loader.js';
import type { ExportRepo } from './export-repo.js';
import type { ExportMessage, Sink } from './sinks/port.js';

/** What the lanes report as they go (Prometheus counters). */
export interface ExportMeter {
  published(sink: SinkKind, count: number, eventTimesMs: readonly number[]): void;
  failed(sink: SinkKind, count: number): void;
  /** Events refused for good and passed over (each also counts as failed). */
  skipped(sink: SinkKind, count: number): void;
}

export interface ExportLanesOptions {
  repo: ExportRepo;
  /** Commits the lanes' progress in batches: what every lane confirmed meanwhile goes in one transaction. */
  writer: OutcomeWriter;
  sinks: readonly Sink[];
  keys: ExportKeys;
  clock: Clock;
  logger: Logger;
  ownership: LaneOwnership;
  meter: ExportMeter;
  /** Messages one lane has in flight (and so the most a crash can make a sink publish again per instance). */
  batch: number;
  /** The longest wait before a failing lane tries again. */
  retryMaxMs: number;
  /** Several nodes: the reactor may run elsewhere, so every lane this node holds is read at each sweep (in one query, as a commit's). */
  shared: boolean;
}

const SWEEP_MS = 1000;
const FULL_SWEEP_EVERY = 30;

/**
 * Publishes each instance's outbox to every sink, in seq order: one lane per instance and sink,
 * each with its cursor in the store. A lane sends a batch, waits until the broker has confirmed
 * it, then moves its cursor past what was confirmed; a failure keeps the cursor where it is and
 * the lane tries again from there with backoff (or when its sink reconnects). Lanes never wait
 * for one another: a failing lane holds only its own instance on its own sink. A message the
 * broker refuses for good (too large) is recorded as failed and passed over.
 *
 * The lanes do not read the outbox each on its own: a commit's lanes are read together, once
 * (ExportLoader), and each publishes what it took; a lane reads alone only when it has run through
 * what it holds and the outbox may hold more. What a lane holds in memory is only read ahead of
 * its cursor: the cursor still moves only past what the broker confirmed, so a crash or a failed
 * publish makes it publish again from there, never skip.
 */
export class ExportLanes {
  private readonly lanes = new Map<string, Map<SinkKind, SinkLane>>();
  private timer: NodeJS.Timeout | undefined;
  private sweeps = 0;
  private stopped = true;
  private readonly running = new Set<Promise<void>>();
  private readonly loader: ExportLoader;

  constructor(private readonly o: ExportLanesOptions) {
    this.loader = new ExportLoader(o.ownership, o.batch, o.repo, o.shared);
    for (const sink of o.sinks) sink.onReady(() => this.wakeSink(sink));
  }

  async start(): Promise<void> {
    this.stopped = false;
    for (const id of await this.o.repo.exportingInstances()) if (this.o.ownership.owns(id)) this.wake(id);
    this.timer = setInterval(() => void this.sweep(), SWEEP_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    for (const lanes of this.lanes.values()) for (const lane of lanes.values()) clearTimeout(lane.retryTimer);
    await Promise.all(this.running);
    await this.o.writer.drain();
  }

  /** The reactor committed new entries for these instances (a hint to read, with several nodes). */
  recorded(instanceIds: readonly string[]): void {
    const lanes: SinkLane[] = [];
    for (const id of instanceIds) {
      if (this.o.ownership.owns(id)) lanes.push(...this.o.sinks.map((sink) => this.lane(id, sink)));
      else this.o.ownership.want(id);
    }
    this.feed(lanes);
  }

  /** This node took the instance's lane: it reads from the cursors. */
  gained(instanceId: string): void {
    this.wake(instanceId);
  }

  /** This node no longer holds the lane: its cursors are read again when it comes back. */
  lost(instanceId: string): void {
    for (const lane of this.lanes.get(instanceId)?.values() ?? []) {
      lane.cursor = null;
      this.forgetLoaded(lane, null);
      clearTimeout(lane.retryTimer);
      lane.retryTimer = undefined;
    }
  }

  /** Events recorded and not yet published by each sink, over the lanes this node holds. */
  lag(): Record<SinkKind, number> {
    const lag: Record<string, number> = Object.fromEntries(this.o.sinks.map((s) => [s.kind, 0]));
    for (const lanes of this.lanes.values()) {
      for (const lane of lanes.values()) if (lane.cursor !== null && this.o.ownership.owns(lane.instanceId)) lag[lane.sink.kind] = (lag[lane.sink.kind] ?? 0) + Math.max(0, lane.head - lane.cursor);
    }
    return lag as Record<SinkKind, number>;
  }

  private wake(instanceId: string): void {
    for (const sink of this.o.sinks) this.run(this.lane(instanceId, sink));
  }

  private wakeSink(sink: Sink): void {
    const waiting: SinkLane[] = [];
    for (const lanes of this.lanes.values()) {
      const lane = lanes.get(sink.kind);
      if (!lane) continue;
      // The broker is back: a lane waiting out its backoff goes now.
      clearTimeout(lane.retryTimer);
      lane.retryTimer = undefined;
      waiting.push(lane);
    }
    this.feed(waiting);
  }

  /**
   * Reads the outbox once for all these lanes, then each publishes what it took (or goes idle).
   * A lane whose cursor is not read yet reads from it on its own.
   */
  private feed(lanes: readonly SinkLane[]): void {
    if (this.stopped || lanes.length === 0) return;
    const known = lanes.filter((lane) => lane.readTo !== null);
    for (const lane of lanes) if (lane.readTo === null) this.run(lane);
    if (known.length === 0) return;
    const work: Promise<void> = this.loader
      .load(known)
      // Each lane, marked `more`, reads on its own as it runs, and backs off if that fails too.
      .catch((err: unknown) => this.o.logger.warn({ err, lanes: known.length }, 'export outbox could not be read for a commit; each lane reads it'))
      .finally(() => {
        this.running.delete(work);
        for (const lane of known) this.run(lane);
      });
    this.running.add(work);
  }

  /** What the lane read ahead is dropped: it reads again after `from` (null: from its stored cursor). */
  private forgetLoaded(lane: SinkLane, from: number | null): void {
    lane.loaded = [];
    lane.readTo = from;
    lane.more = true;
    lane.epoch++;
  }

  private lane(instanceId: string, sink: Sink): SinkLane {
    let lanes = this.lanes.get(instanceId);
    if (!lanes) this.lanes.set(instanceId, (lanes = new Map()));
    let lane = lanes.get(sink.kind);
    if (!lane) {
      lane = { instanceId, sink, cursor: null, head: 0, loaded: [], readTo: null, more: true, loading: false, reloadWanted: false, epoch: 0, pruned: 0, writing: null, running: false, again: false, attempt: 0, retryTimer: undefined };
      lanes.set(sink.kind, lane);
    }
    return lane;
  }

  private run(lane: SinkLane): void {
    if (this.stopped) return;
    if (lane.running) {
      lane.again = true;
      return;
    }
    if (lane.retryTimer !== undefined || !lane.sink.ready || !this.o.ownership.owns(lane.instanceId)) return;
    lane.running = true;
    const work: Promise<void> = this.drain(lane)
      .catch((err: unknown) => {
        this.o.logger.error({ err, instanceId: lane.instanceId, sink: lane.sink.kind }, 'export lane failed unexpectedly; retrying');
        // A batch taken from what it held may not be published: it goes again from the cursor.
        this.forgetLoaded(lane, lane.cursor);
        this.retryLater(lane);
      })
      .finally(() => {
        lane.running = false;
        this.running.delete(work);
        if (lane.again) {
          lane.again = false;
          this.run(lane);
        }
      });
    this.running.add(work);
  }

  /** Publishes what the outbox holds after the cursor, batch after batch, until it is empty or a publish fails. */
  private async drain(lane: SinkLane): Promise<void> {
    const { repo } = this.o;
    const { instanceId, sink } = lane;
    while (!this.stopped && this.o.ownership.owns(instanceId)) {
      lane.again = false;
      if (lane.readTo === null) {
        const cursor = (lane.cursor ??= await repo.publishedSeq(sink.kind, instanceId));
        if (lane.readTo === null) this.forgetLoaded(lane, cursor);
      }
      // Run through what it holds: only then does the lane read the outbox on its own.
      if (lane.loaded.length === 0 && lane.more && !lane.loading) await this.loader.load([lane]);
      const entries = lane.loaded.splice(0, this.o.batch);
      if (entries.length === 0) {
        // A read for it is in flight (a commit's): the lane runs again once it lands.
        if (lane.loading || lane.cursor === null) return;
        lane.head = Math.max(lane.head, lane.cursor);
        // Idle: entries every sink has published and no lane removed (a sink's cursor was not
        // known when it published them) go now, once per idle spell.
        const prunable = this.prunable(instanceId);
        if (prunable !== null && prunable > lane.pruned) {
          lane.pruned = prunable;
          await this.o.writer.drain();
          await repo.prune(instanceId, prunable);
        }
        return;
      }
      // Let go while reading: whoever holds the lane now publishes it (here, again from the cursor).
      if (!this.o.ownership.attemptSignal(instanceId)) {
        this.forgetLoaded(lane, lane.cursor);
        return;
      }
      const key = await this.o.keys.forInstance(instanceId);
      if (!key) {
        this.forgetLoaded(lane, lane.cursor);
        await this.failed(lane, 'the instance has no signing secret');
        return;
      }
      const timestamp = Math.floor(this.o.clock.now().getTime() / 1000);
      const messages: ExportMessage[] = entries.map((e) => ({
        id: e._id,
        instanceId,
        type: e.type,
        seq: e.seq,
        body: Buffer.from(e.body, 'utf8'),
        headers: signedHeaders(key, e._id, timestamp, e.body),
      }));
      // One progress write in flight per lane: what a crash can make a sink publish again stays bounded.
      await lane.writing;
      const outcome = await sink.publish(messages);
      const failure = outcome.failure;
      // A message refused for good is passed over, recorded as failed: it must not hold the lane.
      const passed = failure?.permanent ? outcome.published + 1 : outcome.published;
      let error: string | null = null;
      if (failure?.permanent) {
        // What followed the refused one is published next, before anything read after it.
        lane.loaded.unshift(...entries.slice(passed));
        const skipped = entries[outcome.published] as { _id: string; seq: number };
        error = `${failure.message}; event ${skipped._id} (seq ${skipped.seq}) was not exported`;
        this.o.logger.error({ instanceId, sink: sink.kind, eventId: skipped._id, seq: skipped.seq, err: failure.message }, 'the broker refused an exported event for good; passed over');
        this.o.meter.failed(sink.kind, 1);
        this.o.meter.skipped(sink.kind, 1);
      }
      if (passed > 0) {
        const published = (entries[passed - 1] as { seq: number }).seq;
        lane.cursor = published;
        // Entries the other sinks have published too are this lane's to remove.
        const others = this.prunable(instanceId);
        const done = others === null ? [] : entries.slice(0, passed).filter((e) => e.seq <= others).map((e) => e._id);
        // Not waited for: the next batch is read and published meanwhile (the cursor in memory
        // says where the lane is; the stored one may trail it, which after a crash means a
        // message published again, never one lost).
        const ops = repo.progressOps(sink.kind, instanceId, published, error, this.o.clock.now().toISOString(), done);
        lane.writing = new Promise<void>((resolve) =>
          this.o.writer.write(ops, (committed) => {
            if (!committed) this.o.logger.warn({ instanceId, sink: sink.kind }, 'export progress not recorded; a restart would publish those messages again');
            resolve();
          }),
        );
        this.o.meter.published(sink.kind, outcome.published, entries.slice(0, outcome.published).map((e) => e.at_ms));
      }
      if (failure && !failure.permanent) {
        // Tried again from the cursor, read from the outbox anew: nothing after it is skipped.
        this.forgetLoaded(lane, lane.cursor);
        await this.failed(lane, failure.message);
        return;
      }
      lane.attempt = 0;
    }
  }

  /** The lowest cursor of the instance's sinks, when every sink's is known: what every sink has. */
  private prunable(instanceId: string): number | null {
    const lanes = [...(this.lanes.get(instanceId)?.values() ?? [])];
    if (lanes.length < this.o.sinks.length || lanes.some((l) => l.cursor === null)) return null;
    return Math.min(...lanes.map((l) => l.cursor as number));
  }

  private async failed(lane: SinkLane, message: string): Promise<void> {
    this.o.meter.failed(lane.sink.kind, 1);
    if (lane.attempt === 0) this.o.logger.warn({ instanceId: lane.instanceId, sink: lane.sink.kind, err: message }, 'export publish failed; retrying with backoff');
    await this.o.repo.failure(lane.sink.kind, lane.instanceId, message, this.o.clock.now().toISOString()).catch((err: unknown) => this.o.logger.warn({ err }, 'export failure not recorded'));
    this.retryLater(lane);
  }

  private retryLater(lane: SinkLane): void {
    if (this.stopped) return;
    const attempt = ++lane.attempt;
    const base = Math.min(this.o.retryMaxMs, 100 * 2 ** Math.min(attempt - 1, 20));
    clearTimeout(lane.retryTimer);
    lane.retryTimer = setTimeout(() => {
      lane.retryTimer = undefined;
      this.run(lane);
    }, Math.round(base * (0.8 + 0.4 * Math.random())));
    lane.retryTimer.unref();
  }

  private sweep(): void {
    if (this.stopped) return;
    const full = this.o.shared || ++this.sweeps % FULL_SWEEP_EVERY === 0;
    if (full) {
      // A safety net should a notice be lost; with several nodes, how this node hears of new entries.
      void this.o.repo
        .exportingInstances()
        .then((ids) => this.feed(ids.filter((id) => this.o.ownership.owns(id)).flatMap((id) => this.o.sinks.map((sink) => this.lane(id, sink)))))
        .catch((err: unknown) => this.o.logger.warn({ err }, 'export sweep failed'));
    }
  }
}
