import { repeat } from '../../infra/repeat.js';
import type { Logger } from 'pino';
import { HeldLease } from '../../cluster/held-lease.js';
import type { Leases } from '../../cluster/leases.js';
import type { Placement } from '../../cluster/placement.js';
import { isLapsed } from '../../domain/instance/billing.js';
import type { InstanceQueries } from '../../projections/instances/instance-queries.js';
import type { SessionQueries } from '../../projections/sessions/session-queries.js';
import type { SessionHandover } from '../session-manager.js';

/** What ownership needs of the session manager: open a paired session, let one go without a word. */
export interface SessionControl {
  restart(instanceId: string, accountId: string): Promise<boolean>;
  /** Ends the socket without recording anything: the next owner records what it sees. */
  release(instanceId: string): Promise<void>;
  /** A socket is open, opening or due to reconnect here. */
  isLive(instanceId: string): boolean;
  /** Resolves once what the session's last close recorded is stored (a logout seen at takeover). */
  recorded?(instanceId: string): Promise<void>;
}

export interface SessionOwnershipOptions {
  leases: Leases;
  sessions: SessionQueries;
  instances: InstanceQueries;
  logger: Logger;
  ttlMs: number;
  /** Many nodes balanced (issue 34): which node each paired session belongs on. Without it a node takes every free one. */
  placement?: Placement;
  /** Monotonic milliseconds for this node's own deadlines (a wall clock step must not keep a lost session open). */
  monotonicMs?: () => number;
}

export const sessionLease = (instanceId: string) => `session:${instanceId}`;

/**
 * One node owns each live session, by a lease per instance (issue 15). The owner renews every
 * ttl/4; one that could not renew for 2/3 of the ttl closes the socket, a third of the ttl before
 * the lease can lapse, so the network never sees two nodes connected. Every ttl/10 each node looks
 * for paired sessions whose lease lapsed (their node died) or was released (it stopped) and opens
 * them: a dead node's sessions move within about ttl + ttl/10.
 *
 * The manager asks `mayOpen` before every connect, so a pairing, a restart from the API or a
 * reconnect opens a socket only on the node holding the lease.
 */
export class SessionOwnership implements SessionHandover {
  private readonly held = new Map<string, HeldLease>();
  /** Instances this node held once: their writes are fenced after the lease is gone. */
  private readonly everHeld = new Set<string>();
  private control: SessionControl | null = null;
  private timers: NodeJS.Timeout[] = [];
  private scanning = false;
  private reviewing = false;
  private stopped = false;
  /** Shutting down: opens nothing more, while the sessions it holds stay renewed until they are closed. */
  private closing = false;
  private readonly mono: () => number;

  constructor(private readonly o: SessionOwnershipOptions) {
    this.mono = o.monotonicMs ?? (() => performance.now());
  }

  get nodeId(): string {
    return this.o.leases.nodeId;
  }

  /** Starts renewing, closing on time and taking over lapsed sessions. */
  start(control: SessionControl): void {
    this.control = control;
    const { ttlMs } = this.o;
    const every = (ms: number, job: () => Promise<void>) => {
      this.timers.push(repeat(ms, job, (err) => this.o.logger.warn({ err }, 'session ownership round failed')));
    };
    // Each held lease renews itself and closes its socket on time (HeldLease); this lets go of
    // sessions nothing needs any more.
    every(Math.max(50, Math.floor(ttlMs / 4)), () => this.review());
    every(Math.max(50, Math.floor(ttlMs / 10)), () => this.takeOver());
    void this.takeOver();
  }

  /** Before the manager closes its sockets: no new session opens here (a takeover scan would race the shutdown). */
  closeForShutdown(): void {
    this.closing = true;
  }

  /** Stops the rounds and gives every lease up, so other nodes open the sessions at once (a deploy). Call after the manager closed its sockets. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    const held = [...this.held.values()];
    this.held.clear();
    await Promise.allSettled(held.map((h) => h.release()));
  }

  /** Before a connect: takes (or renews) the lease; false when another node holds it. */
  async mayOpen(instanceId: string): Promise<boolean> {
    if (this.stopped || this.closing) return false;
    const current = this.held.get(instanceId);
    if (current?.valid) return true;
    const lease: HeldLease | null = await HeldLease.acquire({
      leases: this.o.leases,
      name: sessionLease(instanceId),
      ttlMs: this.o.ttlMs,
      ...(this.o.monotonicMs ? { monotonicMs: this.o.monotonicMs } : {}),
      lost: (why): Promise<void> => this.lose(instanceId, lease, why),
      renewalFailed: (err) => this.o.logger.warn({ err, instanceId }, 'session lease not renewed'),
    }).catch((err: unknown) => {
      this.o.logger.warn({ err, instanceId }, 'session lease not taken');
      return null;
    });
    if (lease === null) return false;
    // Taken meanwhile by a concurrent mayOpen of this node: acquire renewed the same token; one holder object.
    const raced = this.held.get(instanceId);
    if (raced?.valid) {
      lease.drop();
      return true;
    }
    raced?.drop();
    this.held.set(instanceId, lease);
    this.everHeld.add(instanceId);
    return true;
  }

  /** The Baileys 440 seam: the socket was replaced because another node took the lease. */
  async movedElsewhere(instanceId: string): Promise<boolean> {
    const holder = await this.o.leases.holder(sessionLease(instanceId));
    return holder !== null && holder.holder !== this.nodeId;
  }

  /**
   * Who else owns the instance's live session, and where it listens (read from the lease only,
   * never from a request): the API forwards requests that need the session there. Null when this
   * node holds it, nobody does, or the holder advertised no address: the request is handled here.
   */
  async ownerElsewhere(instanceId: string): Promise<{ node: string; address: string } | null> {
    if (this.held.has(instanceId)) return null;
    const holder = await this.o.leases.holder(sessionLease(instanceId));
    if (!holder || holder.holder === this.nodeId || holder.address === undefined) return null;
    return { node: holder.holder, address: holder.address };
  }

  /**
   * The fence on session appends: false when this node held the instance's lease and may no
   * longer be its owner (the lease lost, or not renewed in time). Instances it never held pass:
   * a logout or a pairing start records without a socket.
   */
  mayWrite(instanceId: string): boolean {
    if (!this.everHeld.has(instanceId)) return true;
    return this.held.get(instanceId)?.valid === true;
  }

  /** The fencing token this node holds for the instance, or null. */
  token(instanceId: string): number | null {
    return this.held.get(instanceId)?.token ?? null;
  }

  /** Instances this node holds now (for tests and metrics). */
  owned(): string[] {
    return [...this.held.keys()];
  }

  /** Lets go of the sessions nothing needs any more: logged out, canceled, or a pairing given up. */
  private async review(): Promise<void> {
    if (this.reviewing || this.stopped) return;
    this.reviewing = true;
    try {
      for (const [id, held] of this.held) {
        if (this.control?.isLive(id) || (await this.stillWanted(id))) continue;
        if (this.held.get(id) !== held) continue;
        this.held.delete(id);
        await held.release();
      }
    } finally {
      this.reviewing = false;
    }
  }

  /** A paired, running instance stays owned while its session is down, as a single node keeps it until restarted. */
  private async stillWanted(instanceId: string): Promise<boolean> {
    const [status, instance] = await Promise.all([this.o.sessions.status(instanceId), this.o.instances.byId(instanceId)]);
    return status?.paired === true && instance !== null && !isLapsed(instance.billing_status);
  }

  /** The lease was lost (HeldLease calls this before releasing it): the socket closes first. */
  private async lose(instanceId: string, held: HeldLease | null, why: string): Promise<void> {
    if (held === null || this.held.get(instanceId) !== held) return;
    this.held.delete(instanceId);
    this.o.logger.warn({ instanceId, why }, 'session let go: another node may own it now');
    await this.control?.release(instanceId);
  }

  /**
   * Opens the paired sessions whose lease is free (never held, released, or lapsed with a dead node)
   * and that the placement puts here; hands over those it holds that the placement puts on another
   * live node: closed here, then the lease given back, so that node opens it at its next scan.
   */
  private async takeOver(): Promise<void> {
    if (this.scanning || this.stopped || this.closing || !this.control) return;
    this.scanning = true;
    try {
      const paired = await this.o.sessions.paired();
      const placement = this.o.placement;
      if (placement) await placement.refresh();
      const placed = placement?.assign(paired.map((s) => s._id));
      if (placed) await this.handOver(placed);
      const leases = new Map((await this.o.leases.list(paired.map((s) => sessionLease(s._id)))).map((l) => [l._id, l]));
      for (const status of paired) {
        if (this.stopped || this.closing) return;
        if (placed && placed.get(status._id) !== this.nodeId) continue;
        if (this.held.has(status._id) || !this.o.leases.isFree(leases.get(sessionLease(status._id)))) continue;
        const instance = await this.o.instances.byId(status._id);
        if (!instance || isLapsed(instance.billing_status)) continue;
        if (!(await this.mayOpen(status._id))) continue;
        this.o.logger.info({ instanceId: status._id, token: this.token(status._id) }, 'session taken over');
        // restart() connects, and its connect asks mayOpen again: held already, it renews.
        const id = status._id;
        void this.control
          .restart(id, instance.account_id)
          .catch((err: unknown) => this.o.logger.warn({ err, instanceId: id }, 'session taken over but not opened'))
          .then(() => this.giveBackUnopened(id));
      }
    } finally {
      this.scanning = false;
    }
  }

  /**
   * A takeover whose session is neither open nor retrying here (the restart failed or found
   * nothing to open) gives the lease back: kept, it would hold the session on a node where it is
   * not connected, and no other node would open it.
   */
  private async giveBackUnopened(instanceId: string): Promise<void> {
    const held = this.held.get(instanceId);
    if (!held || this.stopped || this.control?.isLive(instanceId)) return;
    // What the close found (the phone removed the device meanwhile) is recorded under this lease:
    // released first, the record would be refused as no longer this node's.
    await this.control?.recorded?.(instanceId);
    if (this.held.get(instanceId) !== held || this.control?.isLive(instanceId)) return;
    this.held.delete(instanceId);
    this.o.logger.warn({ instanceId }, 'session taken over but not opened: its lease is given back');
    await held.release();
  }

  /** Lets the sessions placed on another live node go there: never open on two nodes, a short pause, no re-pairing. */
  private async handOver(placed: Map<string, string>): Promise<void> {
    for (const [id, held] of [...this.held]) {
      const there = placed.get(id);
      if (there === undefined || there === this.nodeId || this.stopped) continue;
      if (this.held.get(id) !== held) continue;
      this.held.delete(id);
      this.o.logger.info({ instanceId: id, to: there }, 'session handed over');
      await this.control?.release(id);
      await held.release();
    }
  }
}
