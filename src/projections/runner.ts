import type { Logger } from 'pino';
import type { DocumentStore, WriteOp } from '../infra/docstore/port.js';
import { typedEvent, type Typed, type UntypedRecordedEvent } from '../domain/recorded.js';
import type { EventStore, RecordedEvent } from '../infra/eventstore/port.js';
import { LaneWork, WorkMeter } from '../infra/metrics/work-meter.js';
import { idempotentWrites } from './idempotent-writes.js';
import type { Projection } from './projection.js';

export const CHECKPOINTS = 'checkpoints';
/** The checkpoint document holding the position every projection of the runner has passed. */
export const PROGRESS_FLOOR = '*';
const MAX_BATCH = 500;
const RETRY_MS = 500;
/** How long a projection that changes nothing may leave its stored checkpoint behind. */
const IDLE_CHECKPOINT_MS = 1_000;

type Checkpoint = { _id: string; position: string };
type Waiter = { position: bigint; resolve: () => void };

export interface RunnerOptions {
  /**
   * For a document store whose batch is not atomic (MongoDB): every write is made conditional on
   * the log position it carries, so a batch reapplied after a crash part-way changes nothing it
   * already changed. The checkpoint is still written last. See idempotent-writes.ts.
   */
  idempotentWrites?: boolean;
  /**
   * Many nodes (issue 15): one node writes the read models; the others fold the same events only
   * for what projections tell this process on commit (secret generations, pokes), writing nothing.
   */
  dryRun?: boolean;
  /**
   * Other nodes wait on the stored positions (read-your-writes there): besides each projection's
   * checkpoint, written with its writes, the runner stores the floor (PROGRESS_FLOOR) every
   * projection has passed as it moves, so a projection that changed nothing in a batch need not
   * write its checkpoint for them to see it pass.
   */
  sharedProgress?: boolean;
  /** How a stored event becomes a typed one; default the domain's schemas. Tests of the runner's own machinery bring their own vocabulary. */
  typed?: (event: UntypedRecordedEvent) => Typed;
  /** Where each projection's CPU and wake-ups are counted (the gateway's /metrics); default a meter of its own. */
  meter?: WorkMeter;
}

/**
 * Runs each projection on its own catch-up subscription from its checkpoint. Events that are
 * already buffered are taken together, so a burst costs one commit instead of one per event.
 */
export class ProjectionRunner {
  private readonly positions = new Map<string, bigint>();
  /** Writes begun and ended per projection (readVersion). */
  private readonly writes = new Map<string, number>();
  /** The stored checkpoints and when they were written (they may trail `positions`). */
  private readonly saved = new Map<string, { position: bigint; at: number }>();
  private readonly waiters = new Map<string, Waiter[]>();
  private readonly loops: Promise<void>[] = [];
  private readonly stops: (() => Promise<void>)[] = [];
  private stopped = false;
  /** Projections a rebuild has halted (see pause), by name. */
  private readonly halted = new Set<string>();
  /** The floor stored last, and whether a write of it is in flight (one at a time). */
  private floor = { stored: -1n, writing: false };
  /** Each projection's loop and how to end its subscription, for pause. */
  private readonly lanes = new Map<string, { loop: Promise<void>; unsubscribe: (() => Promise<void>) | null }>();
  private readonly meter: WorkMeter;

  constructor(
    private readonly store: EventStore,
    private readonly docs: DocumentStore,
    private readonly projections: readonly Projection[],
    private readonly logger: Logger,
    private readonly options: RunnerOptions = {},
  ) {
    this.meter = options.meter ?? new WorkMeter();
  }

  async start(): Promise<void> {
    for (const p of this.projections) {
      await p.setup?.(this.docs);
      const saved = await this.docs.collection<Checkpoint>(CHECKPOINTS).findOne({ _id: p.name });
      this.positions.set(p.name, saved ? BigInt(saved.position) : -1n);
      this.saved.set(p.name, { position: this.position(p.name), at: 0 });
    }
    for (const p of this.projections) this.launch(p);
  }

  /**
   * Halts the named projections once the batch in hand is committed, for a rebuild to swap their
   * collections; answers the highest position they committed. Their readers keep being served
   * from what is there. Must be followed by `resume`.
   */
  async pause(names: readonly string[]): Promise<bigint> {
    // All checked before any is halted: a refused pause leaves every projection running.
    const lanes = names.map((name) => {
      const lane = this.lanes.get(name);
      if (!lane || this.halted.has(name) || this.stopped) throw new Error(`no running projection ${name} to pause`);
      return lane;
    });
    for (const name of names) this.halted.add(name);
    await Promise.all(lanes.map((lane) => lane.unsubscribe?.()));
    await Promise.all(lanes.map((lane) => lane.loop));
    return names.reduce((max, name) => (this.position(name) > max ? this.position(name) : max), -1n);
  }

  /**
   * Starts halted projections again as at start: `setup` reloads what they keep in memory (from
   * the collections their names now point at) and they go on from their stored checkpoints.
   */
  async resume(names: readonly string[]): Promise<void> {
    for (const name of names) {
      const p = this.projections.find((q) => q.name === name);
      if (!p || !this.halted.has(name)) throw new Error(`no paused projection ${name} to resume`);
      await p.setup?.(this.docs);
      const saved = await this.docs.collection<Checkpoint>(CHECKPOINTS).findOne({ _id: p.name });
      const position = saved ? BigInt(saved.position) : -1n;
      this.positions.set(p.name, position);
      this.saved.set(p.name, { position, at: Date.now() });
      this.halted.delete(name);
      if (!this.stopped) this.launch(p);
      this.release(p.name, position);
    }
  }

  private launch(p: Projection): void {
    const lane: { loop: Promise<void>; unsubscribe: (() => Promise<void>) | null } = { loop: Promise.resolve(), unsubscribe: null };
    this.lanes.set(p.name, lane);
    lane.loop = this.run(p, lane);
    this.loops.push(lane.loop);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.stops.map((s) => s()));
    await Promise.all(this.loops);
    // A clean stop leaves every checkpoint where its projection is, so a restart rereads nothing.
    const behind = this.options.dryRun ? [] : this.projections.filter((p) => this.position(p.name) > (this.saved.get(p.name)?.position ?? -1n));
    if (behind.length > 0) {
      await this.docs
        .batch(behind.map((p) => checkpointOp(p.name, this.position(p.name))))
        .catch((err: unknown) => this.logger.warn({ err }, 'checkpoints not saved at stop; the projections will reread from the last ones'));
    }
    for (const list of this.waiters.values()) for (const w of list) w.resolve();
    this.waiters.clear();
  }

  /** Position each projection has committed; -1n before its first event. */
  position(name: string): bigint {
    return this.positions.get(name) ?? -1n;
  }

  /**
   * Changes before and after every write of the projection's read model: two equal answers mean
   * nothing of it was written in between. A commit becomes readable a moment before the runner
   * hears of it, so the position alone can stand still while the read model has already moved.
   */
  readVersion(name: string): string {
    return `${this.position(name)}/${this.writes.get(name) ?? 0}`;
  }

  /** Writes a batch of the projection's read model, its write count moved on both sides. */
  private async write(projection: Projection, ops: WriteOp[], work: LaneWork): Promise<void> {
    const bump = () => this.writes.set(projection.name, (this.writes.get(projection.name) ?? 0) + 1);
    bump();
    work.writes++;
    work.ops += ops.length;
    try {
      await this.docs.batch(ops, { meter: work });
    } finally {
      bump();
    }
  }

  /** True when every named projection (default: all) has committed `position`. */
  hasReached(position: bigint, names?: readonly string[]): boolean {
    return (names ?? this.projections.map((p) => p.name)).every((n) => this.position(n) >= position);
  }

  /** Resolves true once the named projections (undefined: all) pass `position`, false after `timeoutMs`. */
  async waitFor(position: bigint, names: readonly string[] | undefined, timeoutMs: number): Promise<boolean> {
    const pending = (names ?? this.projections.map((p) => p.name)).filter((n) => this.position(n) < position);
    if (pending.length === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    const reached = Promise.all(
      pending.map((name) => new Promise<void>((resolve) => this.addWaiter(name, { position, resolve }))),
    ).then(() => true as const);
    try {
      return await Promise.race([reached, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  private addWaiter(name: string, waiter: Waiter): void {
    const list = this.waiters.get(name) ?? [];
    list.push(waiter);
    this.waiters.set(name, list);
  }

  private release(name: string, position: bigint): void {
    const list = this.waiters.get(name);
    if (!list) return;
    const still = list.filter((w) => (w.position <= position ? (w.resolve(), false) : true));
    if (still.length > 0) this.waiters.set(name, still);
    else this.waiters.delete(name);
  }

  private async run(projection: Projection, lane: { unsubscribe: (() => Promise<void>) | null }): Promise<void> {
    while (!this.stopped && !this.halted.has(projection.name)) {
      try {
        await this.follow(projection, lane);
      } catch (err) {
        // Never skip an event: log, wait, and resume from the last committed checkpoint.
        this.logger.error({ err, projection: projection.name }, 'projection failed; retrying');
        await new Promise((r) => setTimeout(r, RETRY_MS));
      }
    }
  }

  private async follow(projection: Projection, lane: { unsubscribe: (() => Promise<void>) | null }): Promise<void> {
    const subscription = this.store.subscribeToAll({ after: this.position(projection.name) });
    const stop = () => subscription.unsubscribe();
    this.stops.push(stop);
    lane.unsubscribe = stop;
    try {
      while (!this.stopped && !this.halted.has(projection.name)) {
        // Whatever is durable already goes in one batch: a burst costs one commit, not one per event.
        const batch = await subscription.nextBatch(MAX_BATCH);
        if (batch.length === 0) return;
        await this.commit(projection, batch);
      }
    } finally {
      lane.unsubscribe = null;
      this.stops.splice(this.stops.indexOf(stop), 1);
      await subscription.unsubscribe();
    }
  }

  private async commit(projection: Projection, batch: RecordedEvent[]): Promise<void> {
    const work = this.meter.lane(projection.name);
    let started = performance.now();
    let folded = 0;
    /** Events folded since the projection was last told of a commit. */
    let untold = 0;
    const ops: WriteOp[] = [];
    let previous: bigint | null = null;
    for (const event of batch) {
      const before = previous;
      previous = event.position;
      if (!projection.eventTypes.has(event.type)) continue;
      folded++;
      const typed = (this.options.typed ?? typedEvent)(event);
      if (!typed.ok) {
        // A malformed stored event cannot be folded on trust, and retrying will not mend it: it
        // is reported and passed over, and the projection goes on with the next.
        this.logger.error({ projection: projection.name, eventId: event.id, type: event.type, streamId: event.streamId, reason: typed.reason }, 'malformed stored event skipped');
        continue;
      }
      let writes: WriteOp[];
      untold++;
      if (projection.reading?.needs(typed.event)) {
        // It reads the read model: what the events before it wrote must be there to read. That
        // commit is a commit like any other: readers keyed on the position (the chat count) see it move.
        work.foldMs += performance.now() - started;
        if (ops.length > 0 && before !== null && !this.options.dryRun) {
          const written = this.compacted(projection, ops.splice(0), work);
          written.push(checkpointOp(projection.name, before));
          await this.write(projection, written, work);
          this.saved.set(projection.name, { position: before, at: Date.now() });
          // This event is folded after the commit: what came before it is told now.
          this.advanced(projection, before, work, untold - 1 > 0);
          untold = 1;
        }
        started = performance.now();
        const reading = projection.reading.apply(typed.event, (collection, filter) => this.docs.collection(collection).find(filter));
        work.foldMs += performance.now() - started;
        writes = await reading;
        started = performance.now();
      } else writes = projection.apply(typed.event);
      ops.push(...(this.options.idempotentWrites ? idempotentWrites(projection.name, event.position, writes) : writes));
    }
    const last = (batch[batch.length - 1] as RecordedEvent).position;
    work.foldMs += performance.now() - started;
    work.batches++;
    work.events += batch.length;
    work.ignoredEvents += batch.length - folded;
    if (folded === 0) work.ignoredBatches++;
    // A batch that changes nothing need not move the stored checkpoint at once: after a crash the
    // projection reads those events again and again changes nothing. Most projections ignore most
    // events, and this saves them a transaction per batch.
    const now = Date.now();
    if (this.options.dryRun) {
      // Folded for the commit hooks only: the node holding the projections' lease writes.
    } else if (ops.length > 0 || now - (this.saved.get(projection.name)?.at ?? 0) >= IDLE_CHECKPOINT_MS) {
      const written = this.compacted(projection, ops, work);
      written.push(checkpointOp(projection.name, last));
      await this.write(projection, written, work);
      this.saved.set(projection.name, { position: last, at: now });
    }
    this.advanced(projection, last, work, untold > 0);
  }

  /** The batch's writes as the projection makes them fewer (timed as folding), where that is safe. */
  private compacted(projection: Projection, ops: WriteOp[], work: LaneWork): WriteOp[] {
    if (!projection.compact || this.options.idempotentWrites || ops.length < 2) return ops;
    const started = performance.now();
    const fewer = projection.compact(ops);
    work.foldMs += performance.now() - started;
    return fewer;
  }

  /**
   * Stores the position every projection has passed, when it moved: one write in flight at a
   * time, the next one taking whatever the floor reached meanwhile. A lost write is harmless
   * (each projection's own checkpoint still says where it stands), so failures are only logged.
   */
  private publishFloor(): void {
    if (this.floor.writing || this.stopped) return;
    let floor: bigint | null = null;
    for (const p of this.projections) {
      const at = this.position(p.name);
      if (floor === null || at < floor) floor = at;
    }
    if (floor === null || floor <= this.floor.stored) return;
    const position = floor;
    this.floor.writing = true;
    this.docs
      .batch([checkpointOp(PROGRESS_FLOOR, position)])
      .then(
        () => (this.floor.stored = position),
        (err: unknown) => this.logger.warn({ err }, 'progress floor not stored'),
      )
      .finally(() => {
        this.floor.writing = false;
        this.publishFloor();
      });
  }

  /**
   * The projection's state up to `position` is readable: its position moves, and who waits is told.
   * Its commit hook only when it folded an event since it was last told: a batch of events it
   * ignores leaves nothing to pass on, and reactors' hooks wake workers that read the store.
   */
  private advanced(projection: Projection, position: bigint, work: LaneWork, tell: boolean): void {
    const started = performance.now();
    this.positions.set(projection.name, position);
    this.release(projection.name, position);
    if (this.options.sharedProgress && !this.options.dryRun) this.publishFloor();
    if (!tell) {
      work.advanceMs += performance.now() - started;
      return;
    }
    // Told in the same turn as the commit became readable: nothing reads the committed state in
    // between and acts on it (the webhook keys are forgotten before a signer can see the batch).
    try {
      projection.committed?.(position);
    } catch (err) {
      // The commit stands; whatever the projection failed to pass on is its own to recover.
      this.logger.error({ err, projection: projection.name }, 'projection failed to take note of a commit');
    }
    work.advanceMs += performance.now() - started;
  }
}

function checkpointOp(name: string, position: bigint): WriteOp {
  return { collection: CHECKPOINTS, op: 'replaceOne', filter: { _id: name }, doc: { _id: name, position: position.toString() }, upsert: true };
}
