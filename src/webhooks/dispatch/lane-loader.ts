import type { Logger } from '../../infra/logging/logger.js';
import type { DeliveryRepo } from '../deliveries/delivery-repo.js';
import { stubOf, type Known } from './known.js';
import type { Lane, Scheduler } from './scheduler.js';

/** Waits for a commit the reactor announced: 1, 2, 4 ... 64 ms, then the sweep takes over. */
const COMMIT_WAITS_MS = [1, 2, 4, 8, 16, 32, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64];
const SWEEP_MS = 1000;
/** Every lane, not just the ones expecting work: a safety net should a notice ever be missed. */
const FULL_SWEEP_EVERY = 30;
/** An announcement older than this is dropped (its delivery was changed by hand before it was read). */
const EXPECTATION_TTL_MS = 60_000;

interface LaneTiming {
  commitWaits: number;
  expectedAt: number;
}

/**
 * Keeps each instance's lane fed with its queued deliveries, in seq order, from the log. The
 * reactor announces a delivery before the runner has committed it, so a lane re-reads shortly
 * until the announced position is visible; a periodic sweep covers anything slower.
 */
export class LaneLoader {
  private readonly timing = new Map<string, LaneTiming>();
  private sweepTimer: NodeJS.Timeout | undefined;
  private sweeps = 0;
  private stopped = true;

  constructor(
    private readonly repo: DeliveryRepo,
    private readonly scheduler: Scheduler,
    private readonly known: Known,
    private readonly logger: Logger,
    private readonly ready: () => void,
  ) {}

  async start(): Promise<void> {
    this.stopped = false;
    const instances = await this.repo.instancesWithHooks();
    await Promise.all(instances.map((id) => this.refill(this.scheduler.lane(id))));
    this.sweepTimer = setInterval(() => this.sweep(), SWEEP_MS);
    this.sweepTimer.unref();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.sweepTimer);
  }

  /** The reactor handed the runner a delivery at `pos` for this instance. */
  announced(instanceId: string, pos: number): void {
    const lane = this.scheduler.lane(instanceId);
    if (pos <= lane.expectedPos) return;
    lane.expectedPos = pos;
    this.timingOf(lane).expectedAt = Date.now();
    if (!this.stopped) void this.refill(lane);
  }

  /** A first attempt finished: read more when the lane runs low and the log has more. */
  progressed(lane: Lane): void {
    if (lane.more && this.scheduler.laneLow(lane)) void this.refill(lane);
  }

  async refill(lane: Lane): Promise<void> {
    if (this.stopped) return;
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
        const docs = await this.repo.laneBatch(lane.instanceId, lane.maxSeq, room);
        for (const doc of docs) {
          if (this.known.has(doc._id)) continue;
          const stub = stubOf(doc);
          this.known.hold(stub);
          this.scheduler.addFirst(stub);
        }
        lane.more = docs.length === room;
      } while (lane.reloadWanted && !this.stopped);
    } catch (err) {
      this.logger.error({ err, instanceId: lane.instanceId }, 'webhook deliveries could not be read; the sweep will retry');
    } finally {
      lane.loading = false;
    }
    this.ready();
    this.awaitCommit(lane);
  }

  private awaitCommit(lane: Lane): void {
    const timing = this.timingOf(lane);
    if (lane.expectedPos <= lane.maxPos || lane.more) {
      timing.commitWaits = 0;
      return;
    }
    const wait = COMMIT_WAITS_MS[timing.commitWaits++];
    if (wait === undefined || this.stopped) return;
    setTimeout(() => void this.refill(lane), wait).unref();
  }

  private sweep(): void {
    const full = ++this.sweeps % FULL_SWEEP_EVERY === 0;
    const now = Date.now();
    for (const lane of this.scheduler.lanes.values()) {
      const timing = this.timingOf(lane);
      const expecting = lane.expectedPos > lane.maxPos && now - timing.expectedAt < EXPECTATION_TTL_MS;
      if (full || expecting || (lane.more && !lane.loading)) {
        timing.commitWaits = 0;
        void this.refill(lane);
      }
    }
  }

  private timingOf(lane: Lane): LaneTiming {
    let timing = this.timing.get(lane.instanceId);
    if (!timing) this.timing.set(lane.instanceId, (timing = { commitWaits: 0, expectedAt: 0 }));
    return timing;
  }
}
