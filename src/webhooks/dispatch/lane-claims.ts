import { HeldLease } from '../../cluster/held-lease.js';
import type { Leases } from '../../cluster/leases.js';
import type { Placement } from '../../cluster/placement.js';
import type { Clock } from '../../infra/clock.js';
import type { Logger } from '../../infra/logging/logger.js';

/**
 * Which instances' lanes of first attempts this node feeds. First attempts go out in seq order,
 * up to a per-instance concurrency (1 in the ordered mode): only one feeder per instance can keep
 * that promise, so with several nodes each lane is claimed whole, by a lease per instance.
 */
export interface LaneOwnership {
  /** This node may read and feed the instance's lane now. */
  owns(instanceId: string): boolean;
  /** Aborts when this node must stop attempting the instance's deliveries (its claim is lapsing or lost); null when it may not start one now. */
  attemptSignal(instanceId: string): AbortSignal | null;
  /** The instance has new deliveries: claim its lane now if nobody holds it, rather than at the next round. */
  want(instanceId: string): void;
}

/** One node: every lane is this node's, for as long as it runs. */
export const everyLane = (stop: AbortSignal): LaneOwnership => ({ owns: () => true, attemptSignal: () => stop, want: () => undefined });

interface Held {
  lease: HeldLease;
  /** Aborted (with the attempts under it) shortly before the claim would lapse unrenewed, once it is lost, or on stop. */
  signal: AbortSignal;
}

interface LaneLeaseOptions {
  leases: Leases;
  /** Every instance that may have deliveries (the hook docs). */
  instances: () => Promise<string[]>;
  clock: Clock;
  logger: Logger;
  ttlMs: number;
  /** Stops everything, whatever the claims. */
  stop: AbortSignal;
  gained: (instanceId: string) => void;
  lost: (instanceId: string) => void;
  /** Many nodes balanced (issue 34): which node each lane belongs on. Without it a node takes every free one. */
  placement?: Placement;
  /** Whose lanes these are (default `webhook`): the lease names are `<kind>-lane:<instance id>`. */
  kind?: string;
}

/**
 * Lane claims by lease (fencing token, TTL) in the shared document store, each a HeldLease renewed
 * every quarter of the TTL; a lane whose claim is not renewed in time is given up here a margin before it lapses,
 * aborting its attempts in flight, so two nodes never attempt an instance's deliveries at once
 * while a claim holds. A node that dies stops renewing: another node takes the lane once the
 * lease has lapsed, and reads the instance's queued deliveries from the log.
 */
export class LaneLeases implements LaneOwnership {
  private readonly held = new Map<string, Held>();
  /** Lanes being claimed outside a round (want), so a burst of notices makes one attempt. */
  private readonly wanting = new Set<string>();
  /** Lanes found held elsewhere by a want: not asked again before this (the rounds still look). */
  private readonly heldElsewhereUntil = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<void> | null = null;
  /** The placement as last computed: a `want` between rounds claims only a lane placed here. */
  private placed: Map<string, string> | null = null;
  private stopped = false;

  private readonly laneLeaseName: (instanceId: string) => string;
  private readonly kind: string;

  constructor(private readonly o: LaneLeaseOptions) {
    this.kind = o.kind ?? 'webhook';
    this.laneLeaseName = (instanceId) => `${this.kind}-lane:${instanceId}`;
  }

  /** A margin before the lapse: an attempt is aborted then, and none starts within it. */
  private get marginMs(): number {
    return claimMarginMs(this.o.ttlMs);
  }

  owns(instanceId: string): boolean {
    return this.attemptSignal(instanceId) !== null;
  }

  attemptSignal(instanceId: string): AbortSignal | null {
    const held = this.held.get(instanceId);
    if (!held || held.signal.aborted || !held.lease.valid) return null;
    return held.signal;
  }

  want(instanceId: string): void {
    if (this.stopped || this.held.has(instanceId) || this.wanting.has(instanceId)) return;
    if ((this.heldElsewhereUntil.get(instanceId) ?? 0) > this.o.clock.now().getTime()) return;
    const there = this.placed?.get(instanceId);
    if (there !== undefined && there !== this.o.leases.nodeId) return;
    this.wanting.add(instanceId);
    void this.take(instanceId)
      .then((taken) => {
        if (taken) this.heldElsewhereUntil.delete(instanceId);
        else this.heldElsewhereUntil.set(instanceId, this.o.clock.now().getTime() + this.o.ttlMs / 3);
      })
      .catch((err: unknown) => this.o.logger.warn({ err, instanceId }, `a ${this.kind} lane could not be claimed; the next round tries again`))
      .finally(() => this.wanting.delete(instanceId));
  }

  /** Claims what it can now, then keeps renewing and claiming. */
  async start(): Promise<void> {
    await this.claimRound();
    // Often enough that a lane placed here after a join or a death is taken soon after it is free.
    this.timer = setInterval(() => void this.claimRound(), Math.max(100, Math.floor(this.o.ttlMs / 10)));
    this.timer.unref();
  }

  /** A graceful stop: the lanes are released, so another node takes them at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.round;
    await Promise.all(
      [...this.held].map(async ([instanceId, held]) => {
        // Released first (its attempts abort then), so the lease is given back, not dropped.
        await held.lease.release();
        this.drop(instanceId, held);
      }),
    );
  }

  private claimRound(): Promise<void> {
    this.round ??= this.claimAll()
      .catch((err: unknown) => this.o.logger.warn({ err }, `${this.kind} lane claims could not be renewed; retrying`))
      .finally(() => (this.round = null));
    return this.round;
  }

  private async claimAll(): Promise<void> {
    const instances = await this.o.instances();
    const placement = this.o.placement;
    if (placement) {
      await placement.refresh();
      this.placed = placement.assign(instances);
      await this.handOver(this.placed);
    }
    // One read for the whole round: only lanes nobody holds are worth an acquire (held ones renew themselves).
    const stored = new Map((await this.o.leases.list(instances.filter((id) => !this.held.has(id)).map(this.laneLeaseName))).map((doc) => [doc._id, doc]));
    for (const instanceId of instances) {
      if (this.stopped || this.o.stop.aborted) return;
      const name = this.laneLeaseName(instanceId);
      if (this.held.has(instanceId)) continue;
      const there = this.placed?.get(instanceId);
      if (placement && there !== undefined && there !== this.o.leases.nodeId) continue;
      const seen = stored.get(name);
      // Ours still in the store (let go here when a renewal came late): acquire renews it.
      if (!this.o.leases.isFree(seen) && seen?.holder !== this.o.leases.nodeId) continue;
      await this.take(instanceId);
    }
  }

  /** Releases the lanes placed on another live node (their attempts abort), so it takes them at its next round. */
  private async handOver(placed: Map<string, string>): Promise<void> {
    for (const [instanceId, held] of [...this.held]) {
      const there = placed.get(instanceId);
      if (there === undefined || there === this.o.leases.nodeId || this.stopped) continue;
      this.o.logger.info({ instanceId, to: there }, `a ${this.kind} lane handed over`);
      await held.lease.release();
      this.drop(instanceId, held);
    }
  }

  /** How many lanes this node feeds now. */
  count(): number {
    return this.held.size;
  }

  /** True when the lane is this node's now. */
  private async take(instanceId: string): Promise<boolean> {
    const lease = await HeldLease.acquire({
      leases: this.o.leases,
      name: this.laneLeaseName(instanceId),
      ttlMs: this.o.ttlMs,
      marginMs: this.marginMs,
      lost: (why) => {
        const held = this.held.get(instanceId);
        if (held?.lease !== lease) return;
        this.o.logger.warn({ instanceId, why }, `a ${this.kind} lane was let go; its attempts stop here`);
        this.drop(instanceId, held);
      },
      renewalFailed: (err) => this.o.logger.warn({ err, instanceId }, `a ${this.kind} lane claim could not be renewed; retrying`),
    });
    // Taken meanwhile by the other path (a round and a want race): one hold only.
    if (lease === null) return false;
    if (this.stopped || this.held.has(instanceId)) {
      // The same token either way (acquire renewed ours): the hold kept is the first one.
      lease.drop();
      return !this.stopped;
    }
    this.held.set(instanceId, { lease, signal: AbortSignal.any([this.o.stop, lease.signal]) });
    this.o.gained(instanceId);
    return true;
  }

  /** Forgets the lane here (once per hold) and tells the feeder. */
  private drop(instanceId: string, held: Held): void {
    if (this.held.get(instanceId) !== held) return;
    this.held.delete(instanceId);
    held.lease.drop();
    this.o.lost(instanceId);
  }
}

/**
 * How long before a claim or lane lease lapses its holder stops: an attempt is aborted then, and
 * none starts within it. One margin for lanes and retries alike, so neither outlives the other.
 */
export function claimMarginMs(ttlMs: number): number {
  return Math.min(2000, Math.floor(ttlMs / 4));
}
