import { repeat } from '../infra/repeat.js';
import type { Logger } from 'pino';
import type { DocumentStore } from '../infra/docstore/port.js';
import { CHECKPOINTS, PROGRESS_FLOOR, type ProjectionRunner } from '../projections/runner.js';
import { HeldLease } from './held-lease.js';
import type { Leases } from './leases.js';

/** What commands and routes ask of the projections: how far each has come, and waiting for it. */
interface ProjectionProgress {
  position(name: string): bigint;
  hasReached(position: bigint, names?: readonly string[]): boolean;
  waitFor(position: bigint, names: readonly string[] | undefined, timeoutMs: number): Promise<boolean>;
}

export interface LeasedProjectionsOptions {
  leases: Leases;
  docs: DocumentStore;
  ttlMs: number;
  /** The projections' names (for waits on all of them). */
  names: readonly string[];
  /** A fresh runner: writing (the lease holder) or dry (folding only for the commit hooks). */
  runner(mode: 'writing' | 'dry'): ProjectionRunner;
  logger: Logger;
  /** How often a node without the lease reads the stored checkpoints while a caller waits on them (default 50 ms; 1 s otherwise). */
  pollMs?: number;
  monotonicMs?: () => number;
}

export const PROJECTIONS_LEASE = 'projections';

export class RebuildRefused extends Error {}

type Checkpoint = { _id: string; position: string };
const IDLE_POLL_MS = 1_000;

/**
 * The projections of many nodes (issue 15): one node at a time writes the read models, under one
 * lease for the whole runner. One lease, not one per projection: the projections wait on one
 * another (the cancellation reactor on the instances one), a single writer keeps them in step,
 * and one renewal per round is cheaper than twenty. The others run a dry runner (no writes: it
 * only feeds the in-process commit hooks such as secret generations) and answer positions and
 * read-your-writes waits from the stored checkpoints. When the holder dies, its lease lapses and a
 * follower starts writing from the stored checkpoints; a holder that could not renew stops writing
 * a third of the ttl before its lease can lapse. A write from a holder cut off meanwhile is
 * harmless on MongoDB: every projection write there is conditional on the event's log position
 * (idempotent-writes.ts), so a batch applied twice changes nothing the second time.
 */
export class LeasedProjections implements ProjectionProgress {
  private runner: ProjectionRunner | null = null;
  private writing = false;
  private lease: HeldLease | null = null;
  private readonly stored = new Map<string, bigint>();
  /** One read of the checkpoints at a time, shared by every waiter. */
  private reading: Promise<void> | null = null;
  private timers: NodeJS.Timeout[] = [];
  private switching: Promise<void> = Promise.resolve();
  private stopped = false;
  private readonly mono: () => number;
  private readonly pollMs: number;

  constructor(private readonly o: LeasedProjectionsOptions) {
    this.mono = o.monotonicMs ?? (() => performance.now());
    this.pollMs = o.pollMs ?? 50;
  }

  /** True while this node writes the read models. */
  get leading(): boolean {
    return this.writing;
  }

  async start(): Promise<void> {
    await this.readStored();
    await this.round();
    const every = (ms: number, job: () => Promise<void>) => {
      this.timers.push(repeat(ms, job, (err) => this.o.logger.warn({ err }, 'projection lease round failed')));
    };
    every(Math.max(50, Math.floor(this.o.ttlMs / 10)), () => this.round());
    // Idle, a follower's positions (for /ready and metrics) may be a second old; waits read faster.
    every(IDLE_POLL_MS, async () => {
      if (!this.writing) await this.readStored();
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    await this.switching;
    await this.runner?.stop();
    this.runner = null;
    // Handed over at once on a clean stop: the next node need not wait for the lease to lapse.
    await this.lease?.release();
    this.lease = null;
    this.writing = false;
  }

  /**
   * A rebuild while serving (src/rebuild) swaps collection names in this process only: other nodes
   * would go on reading the old collections. With several nodes it is refused; rebuild with the
   * nodes stopped (`npm run rebuild` then opens the shared stores itself).
   */
  async pause(_names: readonly string[]): Promise<bigint> {
    throw new RebuildRefused('a rebuild while serving runs on a single node; with several nodes sharing the backends, stop them and run `npm run rebuild`');
  }

  async resume(_names: readonly string[]): Promise<void> {
    throw new RebuildRefused('nothing was paused');
  }

  position(name: string): bigint {
    if (this.writing && this.runner) return this.runner.position(name);
    // A projection that changed nothing lately stores its checkpoint seldom: the floor every one passed says more.
    const own = this.stored.get(name) ?? -1n;
    const floor = this.stored.get(PROGRESS_FLOOR) ?? -1n;
    return own > floor ? own : floor;
  }

  /** As ProjectionRunner.readVersion on the writing node; elsewhere, the stored checkpoint. */
  readVersion(name: string): string {
    if (this.writing && this.runner) return `w${this.runner.readVersion(name)}`;
    return `s${this.position(name)}`;
  }

  hasReached(position: bigint, names?: readonly string[]): boolean {
    return (names ?? this.o.names).every((n) => this.position(n) >= position);
  }

  /** Resolves true once the named projections' committed positions pass `position` (here or as stored by the writing node), false after `timeoutMs`. */
  async waitFor(position: bigint, names: readonly string[] | undefined, timeoutMs: number): Promise<boolean> {
    const deadline = this.mono() + timeoutMs;
    for (;;) {
      if (this.hasReached(position, names)) return true;
      const left = deadline - this.mono();
      if (left <= 0 || this.stopped) return false;
      const runner = this.writing ? this.runner : null;
      // Writing here: the runner's own waiters answer in the commit's turn. Otherwise the poll does.
      if (runner) await runner.waitFor(position, names, Math.min(left, this.o.ttlMs / 10));
      else {
        await new Promise((r) => setTimeout(r, Math.min(left, this.pollMs)));
        await this.readStored().catch(() => undefined);
      }
    }
  }

  /** One round: when not holding the lease, try to take it (a held one renews itself and stops on time). */
  private async round(): Promise<void> {
    if (this.stopped || this.lease) return;
    const lease: HeldLease | null = await HeldLease.acquire({
      leases: this.o.leases,
      name: PROJECTIONS_LEASE,
      ttlMs: this.o.ttlMs,
      ...(this.o.monotonicMs ? { monotonicMs: this.o.monotonicMs } : {}),
      lost: async (why): Promise<void> => {
        if (this.lease !== lease) return;
        this.lease = null;
        await this.switchTo('dry', why);
      },
      renewalFailed: (err) => this.o.logger.warn({ err }, 'projections lease not renewed'),
    }).catch(() => null);
    if (lease !== null) {
      if (this.stopped) return void (await lease.release());
      this.lease = lease;
      await this.switchTo('writing', 'the projections lease was taken');
    } else if (!this.runner) {
      await this.switchTo('dry', 'another node writes the read models');
    }
  }

  private switchTo(mode: 'writing' | 'dry', why: string): Promise<void> {
    this.switching = this.switching.then(async () => {
      if (this.stopped || (this.runner && this.writing === (mode === 'writing'))) return;
      await this.runner?.stop();
      // From the checkpoints the writer stored, whichever runner comes next.
      if (mode === 'dry') {
        this.writing = false;
        await this.readStored();
      }
      const runner = this.o.runner(mode);
      await runner.start();
      this.runner = runner;
      this.writing = mode === 'writing';
      this.o.logger.info({ mode, token: this.lease?.token ?? null, why }, 'projections runner switched');
    });
    return this.switching;
  }

  private readStored(): Promise<void> {
    this.reading ??= (async () => {
      try {
        for (const doc of await this.o.docs.collection<Checkpoint>(CHECKPOINTS).find({})) this.stored.set(doc._id, BigInt(doc.position));
      } finally {
        this.reading = null;
      }
    })();
    return this.reading;
  }
}
