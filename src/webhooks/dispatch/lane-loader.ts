import type { Logger } from '../../infra/logging/logger.js';
import type { QueuedNotice } from '../webhook-reactor.js';
import type { DeliveryRepo } from '../deliveries/delivery-repo.js';
import type { DeliveryDoc } from '../deliveries/documents.js';
import { stubOf, type HeldDeliveries } from './held-deliveries.js';
import type { LaneOwnership } from './lane-claims.js';
import { readLanes, type LaneRead, type LanesQuery } from './lane-reads.js';
import type { Lane, Scheduler, Stub } from './scheduler.js';

const SWEEP_MS = 1000;
/** Every lane, not only the ones known to be behind: a safety net, should a notice be lost. */
const FULL_SWEEP_EVERY = 30;

/**
 * Keeps each instance's lane fed with its queued deliveries, in seq order.
 *
 * In the steady state nothing is queried: the reactor hands over each delivery once the runner
 * has committed it, and the lane takes it when it follows the last one the lane holds. The log
 * itself is read only to (re)synchronise a lane: at start, after it overflowed or missed a seq,
 * and by a slow periodic sweep.
 *
 * With several nodes it feeds only the lanes this node has claimed (LaneOwnership), and only
 * from the log: the reactor that writes deliveries may run on another node, so a notice is only a
 * hint to read the lane now, and every claimed lane is read at each sweep.
 */
export class LaneLoader {
  private sweepTimer: NodeJS.Timeout | undefined;
  private sweeps = 0;
  private stopped = true;

  constructor(
    private readonly repo: DeliveryRepo,
    private readonly scheduler: Scheduler,
    private readonly known: HeldDeliveries,
    private readonly logger: Logger,
    private readonly ready: () => void,
    private readonly ownership: LaneOwnership,
    /** Several nodes share the log: notices cover only what this node's reactor recorded. */
    private readonly shared = false,
  ) {}

  async start(): Promise<void> {
    this.stopped = false;
    const instances = (await this.repo.instancesWithHooks()).filter((id) => this.ownership.owns(id));
    const lanes = instances.map((id) => this.scheduler.lane(id));
    if (this.shared) await this.refillMany(lanes);
    else await Promise.all(lanes.map((lane) => this.refill(lane)));
    this.sweepTimer = setInterval(() => this.sweep(), SWEEP_MS);
    this.sweepTimer.unref();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.sweepTimer);
  }

  /** Deliveries the runner committed, in log order: each joins its lane. */
  committed(notices: readonly QueuedNotice[]): void {
    if (this.stopped) return;
    if (this.shared) {
      // Several nodes: a node that does not hold the projections' lease folds the events without
      // writing them, so a notice may name a delivery not in the log yet. It is a hint to read.
      const owned: Lane[] = [];
      for (const id of new Set(notices.map((n) => n.instance_id))) {
        if (this.ownership.owns(id)) owned.push(this.scheduler.lane(id));
        // A lane nobody feeds yet (a new instance): claimed now, read once gained.
        else this.ownership.want(id);
      }
      // One read of the log for every lane the commit names, however many.
      void this.refillMany(owned);
      return;
    }
    const byLane = new Map<Lane, QueuedNotice[]>();
    for (const notice of notices) {
      if (!this.ownership.owns(notice.instance_id)) continue;
      const lane = this.scheduler.lane(notice.instance_id);
      // A refill that read the log after the commit may have taken these already.
      if (notice.seq <= lane.maxSeq) continue;
      const list = byLane.get(lane);
      if (list) list.push(notice);
      else byLane.set(lane, [notice]);
    }
    for (const [lane, list] of byLane) this.deliverCommitted(lane, list);
    this.ready();
  }

  /** A first attempt finished: read more when the lane runs low and the log has more. */
  progressed(lane: Lane): void {
    if (lane.more && this.scheduler.laneLow(lane)) void this.refill(lane);
  }

  /** This node claimed the instance's lane: it reads it from the log. */
  gained(instanceId: string): void {
    void this.refill(this.scheduler.lane(instanceId));
  }

  /**
   * This node no longer feeds the lane (its claim lapsed or went elsewhere), or the lane skipped
   * a delivery it could not attempt: what it held waiting goes back to the log, and the lane is
   * read from the start again once it is fed here again. Attempts in flight finish or abort.
   */
  reset(instanceId: string): void {
    const lane = this.scheduler.lanes.get(instanceId);
    if (!lane) return;
    for (const stub of this.scheduler.dropQueued(lane)) this.known.release(stub);
    lane.maxSeq = 0;
    lane.more = true;
    lane.waitingFor = null;
  }

  /** This process no longer holds the delivery: a lane that stopped before it reads on. */
  released(stub: Stub): void {
    const lane = this.scheduler.lanes.get(stub.instanceId);
    if (lane?.waitingFor !== stub.id) return;
    lane.waitingFor = null;
    void this.refill(lane);
  }

  /** Reads the lane's queued deliveries after the last one it took, as many as fit. */
  async refill(lane: Lane): Promise<void> {
    if (this.stopped || !this.ownership.owns(lane.instanceId)) return;
    if (lane.loading) {
      lane.reloadWanted = true;
      return;
    }
    lane.loading = true;
    try {
      do {
        lane.reloadWanted = false;
        const room = this.scheduler.laneRoom(lane);
        if (room <= 0) {
          lane.more = true;
          break;
        }
        const afterSeq = lane.maxSeq;
        const { all, free } = await this.known.read(() => this.repo.queued(lane.instanceId, room, afterSeq));
        // Let go while reading: the lane was reset, and the next owner reads it from the log.
        if (!this.ownership.owns(lane.instanceId)) break;
        // Reset and taken back while reading: read again from where it stands (gained asked for it).
        if (lane.maxSeq !== afterSeq) continue;
        const whole = this.takeInOrder(lane, all, new Set(free.map((d) => d._id)));
        lane.more = all.length === room || !whole;
      } while (lane.reloadWanted && !this.stopped);
    } catch (err) {
      this.logger.error({ err, instanceId: lane.instanceId }, 'webhook deliveries could not be read; the sweep will retry');
      lane.more = true;
    } finally {
      lane.loading = false;
    }
    this.ready();
  }

  /**
   * Takes what a read found for the lane, in seq order, up to the first delivery it may not take:
   * one this process still holds (an aborted attempt of an earlier hold of the lane, not ended yet)
   * or let go of while the read ran. Past it, the lane would never read it again, though it is
   * still queued in the log if its attempt ends with nothing recorded; stopping there also keeps
   * the first attempts in seq order. False when it stopped short.
   */
  private takeInOrder(lane: Lane, docs: readonly DeliveryDoc[], free: ReadonlySet<string>): boolean {
    lane.waitingFor = null;
    for (const doc of docs) {
      if (!free.has(doc._id)) {
        // Still held: read on once its hold ends. Its hold ended during the read: read on now.
        if (this.known.has(doc._id)) lane.waitingFor = doc._id;
        else lane.reloadWanted = true;
        return false;
      }
      this.take(stubOf(doc));
    }
    return true;
  }

  private take(stub: Stub): void {
    // Held only once the lane has it: one it already passed must not stay held for ever.
    if (this.scheduler.addFirst(stub)) this.known.hold(stub);
  }

  private deliverCommitted(lane: Lane, notices: QueuedNotice[]): void {
    // Taking from notices keeps seq order only when the lane holds everything before them.
    const follows = (notices[0] as QueuedNotice).seq === lane.maxSeq + 1;
    if (lane.more || lane.loading || !follows || notices.length > this.scheduler.laneRoom(lane)) {
      lane.more = true;
      void this.refill(lane);
      return;
    }
    for (const n of notices) {
      if (!this.known.has(n._id)) this.take(stubOf(n));
    }
  }

  private sweep(): void {
    const full = this.shared || ++this.sweeps % FULL_SWEEP_EVERY === 0;
    const due = [...this.scheduler.lanes.values()].filter((lane) => full || (lane.more && !lane.loading));
    // On MongoDB (several nodes) one query for all; the embedded store answers per lane off its index.
    if (this.shared) void this.refillMany(due);
    else for (const lane of due) void this.refill(lane);
  }

  /**
   * Reads every lane of `lanes` that has room in one query of the log (a single lane the usual
   * way). What a lane takes is what a read of its own would have taken: its first `room` queued
   * deliveries after its last seq. A read cut short by the overall limit leaves the lanes it may
   * have cut marked `more`, read again as they run low or at the next sweep.
   */
  async refillMany(lanes: readonly Lane[]): Promise<void> {
    const reads: LaneFill[] = [];
    for (const lane of new Set(lanes)) {
      if (this.stopped || !this.ownership.owns(lane.instanceId)) continue;
      if (lane.loading) {
        lane.reloadWanted = true;
        continue;
      }
      const room = this.scheduler.laneRoom(lane);
      if (room <= 0) {
        lane.more = true;
        continue;
      }
      reads.push({ lane, instanceId: lane.instanceId, room, afterSeq: lane.maxSeq });
    }
    if (reads.length === 0) return;
    if (reads.length === 1) return this.refill((reads[0] as { lane: Lane }).lane);
    for (const r of reads) r.lane.loading = true;
    // The deliveries of the latest query this node holds nowhere (HeldDeliveries): the ones a lane may take.
    let freeIds = new Set<string>();
    const query: LanesQuery<DeliveryDoc> = async (instances, limit) => {
      const { all, free } = await this.known.read(() => this.repo.queuedAfter(instances, limit));
      freeIds = new Set(free.map((d) => d._id));
      return all;
    };
    const take = ({ lane, afterSeq }: LaneFill, docs: DeliveryDoc[], more: boolean): boolean => {
      // Let go while reading: the lane was reset, and the next owner reads it from the log.
      if (!this.ownership.owns(lane.instanceId)) return false;
      // Reset and taken back while reading: read again from where it stands.
      if (lane.maxSeq !== afterSeq) {
        lane.reloadWanted = true;
        return false;
      }
      lane.more = !this.takeInOrder(lane, docs, freeIds) || more;
      return lane.maxSeq === docs.at(-1)?.seq;
    };
    try {
      await readLanes(reads, query, take, () => !this.stopped);
    } catch (err) {
      this.logger.error({ err, lanes: reads.length }, 'webhook deliveries could not be read; the sweep will retry');
      for (const r of reads) r.lane.more = true;
    } finally {
      for (const r of reads) {
        r.lane.loading = false;
        if (r.lane.reloadWanted) void this.refill(r.lane);
      }
    }
    this.ready();
  }
}

interface LaneFill extends LaneRead {
  lane: Lane;
}
