import type { Leases } from '../../cluster/leases.js';
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
  token: number;
  until: number;
  /** Aborted (with the attempts under it) shortly before the claim would lapse unrenewed, or once it is lost. */
  abort: AbortController;
  signal: AbortSignal;
  timer: NodeJS.Timeout | undefined;
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
  /** Whose lanes these are (default `webhook`): the lease names are `<kind>-lane:<instance id>`. */
  kind?: string;
}

/**
 * Lane claims by lease (fencing token, TTL) in the shared document store. Renewed every third of
 * the TTL; a lane whose claim is not renewed in time is given up here a margin before it lapses,
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
    if (!held || held.signal.aborted || held.until - this.o.clock.now().getTime() <= this.marginMs) return null;
    return held.signal;
  }

  want(instanceId: string): void {
    if (this.stopped || this.held.has(instanceId) || this.wanting.has(instanceId)) return;
    if ((this.heldElsewhereUntil.get(instanceId) ?? 0) > this.o.clock.now().getTime()) return;
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
    this.timer = setInterval(() => void this.claimRound(), Math.max(100, Math.floor(this.o.ttlMs / 3)));
    this.timer.unref();
  }

  /** A graceful stop: the lanes are released, so another node takes them at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.round;
    await Promise.all(
      [...this.held].map(async ([instanceId, held]) => {
        this.drop(instanceId, held);
        await this.o.leases.release(this.laneLeaseName(instanceId), held.token).catch(() => undefined);
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
    // One read for the whole round: only lanes nobody holds are worth an acquire.
    const stored = new Map((await this.o.leases.list(instances.filter((id) => !this.held.has(id)).map(this.laneLeaseName))).map((doc) => [doc._id, doc]));
    for (const instanceId of instances) {
      if (this.stopped || this.o.stop.aborted) return;
      const name = this.laneLeaseName(instanceId);
      const held = this.held.get(instanceId);
      const now = this.o.clock.now().getTime();
      if (held) {
        if (await this.o.leases.renew(name, held.token, this.o.ttlMs)) this.extend(instanceId, held, now + this.o.ttlMs);
        else this.drop(instanceId, held);
        continue;
      }
      const seen = stored.get(name);
      // Ours still in the store (let go here when a renewal came late): acquire renews it.
      if (!this.o.leases.isFree(seen) && seen?.holder !== this.o.leases.nodeId) continue;
      await this.take(instanceId);
    }
  }

  /** True when the lane is this node's now. */
  private async take(instanceId: string): Promise<boolean> {
    const now = this.o.clock.now().getTime();
    const token = await this.o.leases.acquire(this.laneLeaseName(instanceId), this.o.ttlMs);
    // Taken meanwhile by the other path (a round and a want race): one hold only.
    if (token === null || this.stopped) return false;
    if (this.held.has(instanceId)) return true;
    const abort = new AbortController();
    const fresh: Held = { token, until: 0, abort, signal: AbortSignal.any([this.o.stop, abort.signal]), timer: undefined };
    this.held.set(instanceId, fresh);
    this.extend(instanceId, fresh, now + this.o.ttlMs);
    this.o.gained(instanceId);
    return true;
  }

  private extend(instanceId: string, held: Held, until: number): void {
    held.until = until;
    clearTimeout(held.timer);
    held.timer = setTimeout(() => {
      this.o.logger.warn({ instanceId }, `a ${this.kind} lane claim was not renewed in time; its attempts stop here`);
      this.drop(instanceId, held);
    }, Math.max(0, until - this.marginMs - this.o.clock.now().getTime()));
    held.timer.unref();
  }

  private drop(instanceId: string, held: Held): void {
    clearTimeout(held.timer);
    if (this.held.get(instanceId) === held) this.held.delete(instanceId);
    if (held.abort.signal.aborted) return;
    held.abort.abort();
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
