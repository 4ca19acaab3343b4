import type { LaneOwnership } from '../webhooks/dispatch/lane-claims.js';
import { readLanes, type LaneRead, type LanesQuery } from '../webhooks/dispatch/lane-reads.js';
import type { OutboxDoc } from './documents.js';
import type { ExportRepo } from './export-repo.js';
import type { Sink } from './sinks/port.js';

/** One instance's progress on one sink. */
export interface SinkLane {
  readonly instanceId: string;
  readonly sink: Sink;
  /** Published up to here (null until read from the store). */
  cursor: number | null;
  /** The highest seq known to be in the outbox (for the lag). */
  head: number;
  /** Entries read after what the lane has published or is publishing, not yet handed to the sink, in seq order. */
  loaded: OutboxDoc[];
  /** The last seq read into `loaded` (null: not known; the lane reads from its cursor). */
  readTo: number | null;
  /** The outbox may hold entries after `readTo` that the lane has not read. */
  more: boolean;
  /** A read for this lane is in flight; `reloadWanted`: it was asked for again meanwhile (a later commit). */
  loading: boolean;
  reloadWanted: boolean;
  /** Bumped whenever `loaded` is thrown away (the lane lost, a publish failed): a read begun before lands nowhere. */
  epoch: number;
  /** The lane's progress write not yet committed: at most one, so a crash repeats at most two batches. */
  writing: Promise<void> | null;
  /** The store has every entry up to here pruned by the idle sweep of this lane (the range delete is done once per idle spell). */
  pruned: number;
  running: boolean;
  again: boolean;
  attempt: number;
  retryTimer: NodeJS.Timeout | undefined;
}

const byId = (a: LaneRead, b: LaneRead) => (a.instanceId < b.instanceId ? -1 : a.instanceId > b.instanceId ? 1 : 0);

interface LaneLoad extends LaneRead {
  lane: SinkLane;
  epoch: number;
}

/**
 * Reads the outbox for the export lanes, as the webhook lane loader reads the delivery log: the
 * lanes a commit names (every instance's, every sink's) in one query of the store, each lane
 * taking its next entries into `loaded`, where it publishes them from. A lane reads on its own
 * only when it has run through what it holds and the outbox may hold more, or has just been gained.
 *
 * One query for many instances only on a shared store (MongoDB, several nodes); the embedded store
 * answers per instance off its index, the sinks of one instance still sharing its read.
 */
export class ExportLoader {
  private readonly query: LanesQuery<OutboxDoc>;

  constructor(
    private readonly ownership: LaneOwnership,
    /** The most entries a lane holds read ahead of its sink. */
    private readonly held: number,
    repo: ExportRepo,
    shared: boolean,
  ) {
    this.query = shared
      ? (instances, limit) => repo.afterMany(instances, limit)
      : // In instance order, as the one query would answer: a read cut short reads on from there.
        async (instances) => (await Promise.all([...instances].sort(byId).map((i) => repo.after(i.instanceId, i.afterSeq, i.room)))).flat();
  }

  /**
   * Reads these lanes' next entries, one query for all (a few when the limit cuts it short). A lane whose read is in flight is read again once it lands;
   * one not read yet (no cursor) is left to read from its cursor. Throws what the store throws,
   * the lanes marked `more` so that each reads again on its own.
   */
  async load(lanes: Iterable<SinkLane>): Promise<void> {
    const reads: LaneLoad[] = [];
    for (const lane of new Set(lanes)) {
      if (lane.readTo === null || !this.ownership.owns(lane.instanceId)) continue;
      if (lane.loading) {
        lane.reloadWanted = true;
        continue;
      }
      const room = this.held - lane.loaded.length;
      if (room <= 0) {
        lane.more = true;
        continue;
      }
      reads.push({ lane, instanceId: lane.instanceId, afterSeq: lane.readTo, room, epoch: lane.epoch });
    }
    if (reads.length === 0) return;
    for (const { lane } of reads) {
      lane.loading = true;
      lane.reloadWanted = false;
    }
    try {
      await readLanes(reads, this.query, ({ lane, afterSeq, epoch }, docs, more) => {
        // Let go, failed or reset while reading: the lane reads from its cursor again.
        if (lane.epoch !== epoch || lane.readTo !== afterSeq || !this.ownership.owns(lane.instanceId)) return false;
        const last = docs.at(-1);
        if (last) {
          lane.loaded.push(...docs);
          lane.readTo = last.seq;
          lane.head = Math.max(lane.head, last.seq);
        }
        lane.more = more;
        return true;
      });
    } catch (err) {
      for (const { lane } of reads) lane.more = true;
      throw err;
    } finally {
      for (const { lane } of reads) lane.loading = false;
    }
    // Asked for again while reading: a commit after the read began may hold entries it missed.
    const again = reads.filter((r) => r.lane.reloadWanted).map((r) => r.lane);
    if (again.length > 0) await this.load(again);
  }
}
