import type { Logger } from '../../infra/logging/logger.js';
import type { QueuedNotice } from '../../projections/webhooks/webhook-reactor.js';
import type { DeliveryRepo } from '../deliveries/delivery-repo.js';
import { stubOf, type Known } from './known.js';
import type { Lane, Scheduler, Stub } from './scheduler.js';

const SWEEP_MS = 1000;
/** Every lane, not only the ones known to be behind: a safety net, should a notice be lost. */
const FULL_SWEEP_EVERY = 30;
/** After this many looks without a commit, look less often (a commit being retried by the runner). */
const EAGER_LOOKS = 200;
const PATIENT_LOOK_MS = 10;
/** A notice whose commit never shows (its delivery changed by hand first) is left to the log. */
const NOTICE_TTL_MS = 60_000;

/**
 * Keeps each instance's lane fed with its queued deliveries, in seq order.
 *
 * In the steady state nothing is queried: the reactor hands over each delivery as it decides it,
 * and the lane takes it once the runner has committed it, which shows as the instance's hook
 * document reaching that seq (they are written in the same batch). The log itself is read only
 * to (re)synchronise a lane: at start, after it overflowed, and by a slow periodic sweep.
 */
export class LaneLoader {
  private readonly waiting = new Map<string, { lane: Lane; notices: QueuedNotice[]; since: number }>();
  private watching = false;
  private looksWithoutCommit = 0;
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

  /** The reactor handed the runner a delivery; it joins its lane once committed. */
  announced(notice: QueuedNotice): void {
    if (this.stopped) return;
    const lane = this.scheduler.lane(notice.instance_id);
    if (notice.seq <= lane.maxSeq) return;
    let entry = this.waiting.get(lane.instanceId);
    if (!entry) this.waiting.set(lane.instanceId, (entry = { lane, notices: [], since: Date.now() }));
    const last = entry.notices[entry.notices.length - 1];
    // A replayed notice (the runner retrying a commit) repeats one already waiting.
    if (!last || notice.seq > last.seq) entry.notices.push(notice);
    if (!this.watching) void this.watch();
  }

  /** A first attempt finished: read more when the lane runs low and the log has more. */
  progressed(lane: Lane): void {
    if (lane.more && this.scheduler.laneLow(lane)) void this.refill(lane);
  }

  /** Reads the lane's queued deliveries after the last one it took, as many as fit. */
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
        for (const doc of docs) if (!this.known.has(doc._id)) this.take(stubOf(doc));
        lane.more = docs.length === room;
      } while (lane.reloadWanted && !this.stopped);
    } catch (err) {
      this.logger.error({ err, instanceId: lane.instanceId }, 'webhook deliveries could not be read; the sweep will retry');
      lane.more = true;
    } finally {
      lane.loading = false;
    }
    this.ready();
  }

  private take(stub: Stub): void {
    this.known.hold(stub);
    this.scheduler.addFirst(stub);
  }

  /** Moves announced deliveries into their lanes as their commits become visible. */
  private async watch(): Promise<void> {
    this.watching = true;
    try {
      while (this.waiting.size > 0 && !this.stopped) {
        let moved = false;
        for (const [instanceId, entry] of this.waiting) {
          const committed = (await this.repo.hook(instanceId))?.seq ?? 0;
          const stale = Date.now() - entry.since > NOTICE_TTL_MS;
          const ready = entry.notices.filter((n) => n.seq <= committed || stale);
          if (ready.length === 0) continue;
          moved = true;
          entry.notices = entry.notices.slice(ready.length);
          entry.since = Date.now();
          if (entry.notices.length === 0) this.waiting.delete(instanceId);
          this.deliverCommitted(entry.lane, stale ? [] : ready);
        }
        if (moved) {
          this.looksWithoutCommit = 0;
          this.ready();
        } else this.looksWithoutCommit++;
        if (this.waiting.size === 0) break;
        // A commit is a few ms away: look again on the next turn, then more patiently.
        const pause = this.looksWithoutCommit > EAGER_LOOKS ? PATIENT_LOOK_MS : 0;
        await new Promise((r) => (pause ? setTimeout(r, pause) : setImmediate(r)));
      }
    } catch (err) {
      this.logger.error({ err }, 'webhook commits could not be checked; the sweep will read the log');
      for (const { lane } of this.waiting.values()) lane.more = true;
      this.waiting.clear();
    } finally {
      this.watching = false;
    }
  }

  private deliverCommitted(lane: Lane, notices: QueuedNotice[]): void {
    // Taking from notices keeps seq order only when the lane holds everything before them.
    if (lane.more || lane.loading || notices.length === 0 || notices.length > this.scheduler.laneRoom(lane)) {
      lane.more = true;
      void this.refill(lane);
      return;
    }
    for (const n of notices) {
      if (n.seq <= lane.maxSeq || this.known.has(n._id)) continue;
      this.take(stubOf(n));
    }
  }

  private sweep(): void {
    const full = ++this.sweeps % FULL_SWEEP_EVERY === 0;
    for (const lane of this.scheduler.lanes.values()) {
      if (full || (lane.more && !lane.loading)) void this.refill(lane);
    }
  }
}
