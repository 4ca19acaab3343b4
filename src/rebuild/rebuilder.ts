import { AliasedDocumentStore } from '../infra/docstore/aliased-document-store.js';
import type { Document, WriteOp } from '../infra/docstore/port.js';
import { checkedEvent } from '../domain/recorded.js';
import type { EventStore, RecordedEvent } from '../infra/eventstore/port.js';
import type { Projection, ReadDocs } from '../projections/projection.js';
import { CHECKPOINTS, PROGRESS_FLOOR } from '../projections/runner.js';
import { checksum } from './checksum.js';
import type { Progress } from './progress.js';
import type { ReadModel } from './read-models.js';
import { StagedFold } from './staged-fold.js';
import { foldOnThread, type EmbeddedStorePaths, type MalformedEvent } from './thread.js';

export interface Checksum {
  sha256: string;
  documents: number;
}

export interface RebuildResult {
  name: string;
  /** The serving model when the rebuild took over from it (all of the log it had projected). */
  before: Checksum;
  /** The rebuilt model at the swap. */
  after: Checksum;
}

export interface RebuildStats {
  events: number;
  seconds: number;
  /** The models folded on a worker thread (see RebuilderOptions.thread); none when all were here. */
  onThread: string[];
}

/**
 * The projections of a running gateway that serve the models being rebuilt. A rebuild halts them
 * only for the swap: the last events, the checksums and the switch of the names.
 */
export interface LiveProjections {
  /** Halts the named projections after the batch in hand; answers the highest position they committed. */
  pause(names: readonly string[]): Promise<bigint>;
  /** Starts them again from the swapped-in collections and the checkpoints stored with the swap. */
  resume(names: readonly string[]): Promise<void>;
}

/** What a rebuild reads: the log, up to the head it found when it started and on. */
export type RebuildSource = Pick<EventStore, 'readAll' | 'headPosition'>;

/** No gateway runs (the CLI holds the data directory): nothing to halt. */
const NO_LIVE_PROJECTIONS: LiveProjections = { pause: async () => -1n, resume: async () => undefined };

export interface RebuilderOptions {
  live?: LiveProjections;
  /**
   * How long the old collections stay after the swap before they are emptied: a request that
   * resolved the old name just before the swap may still be reading them.
   */
  dropAfterMs?: number;
  /** Told of each stored event that does not match its schema, and so is left out. */
  malformed?: (event: Pick<RecordedEvent, 'id' | 'type' | 'streamId'>, reason: string) => void;
  /**
   * The embedded stores' directories, when both stores are embedded: in a rebuild of several
   * models, those marked `ownThread` fold the log up to its head on a worker thread of their own,
   * beside the others on this one (the fold is CPU work; one thread used one of the cores).
   */
  thread?: EmbeddedStorePaths;
  /**
   * Folded documents written per transaction at the end of the replay; by default few while a
   * gateway serves (see SERVING_CHUNK), many otherwise. A thread is handed its owner's.
   */
  writeStep?: number;
}

/** Log events read per step; each step's writes of every read model commit in one batch. */
const CHUNK = 5_000;
/** Log events read and folded at a time within a step (see replay). */
const READ_PART = 1_000;
/**
 * In a serving gateway, smaller steps with a turn of the event loop between them: the replay is
 * CPU work on the thread that answers requests, and a request should wait for one step at most.
 */
const SERVING_CHUNK = 500;

/** Folded documents written per transaction at the end of the replay, with no gateway serving. */
const STAGED_STEP = 10_000;

/** Documents removed per transaction when an old model is emptied. */
const DELETE_STEP = 1_000;

type Replaying = { model: ReadModel; projection: Projection; staged: boolean; appendOnly: boolean };

/** A step's writes so far: other models' operations, and append-only models' new documents by collection. */
type Step = { ops: WriteOp[]; inserts: Map<string, Document[]> };

/**
 * Rebuilds read models from the log into fresh collections, then points their logical names at
 * them together with the projections' checkpoints, in one batch: a reader sees the old model or
 * the new one, never a half-built one, and the projections go on from where the rebuild stopped.
 * The log is read once for all the models asked for.
 *
 * With a running gateway the old models keep being served and projected while the new ones are
 * built and caught up to the head; the live projections are halted only for the last events and
 * the swap, then resume on the new collections.
 */
export class Rebuilder {
  private readonly live: LiveProjections;
  private readonly chunk: number;
  private readonly writeStep: number;
  /** Malformed events told of in this rebuild: the thread's are told only when this one skipped them unseen. */
  private readonly reported = new Set<string>();
  private readonly malformed: (event: Pick<RecordedEvent, 'id' | 'type' | 'streamId'>, reason: string) => void;

  constructor(
    private readonly events: RebuildSource,
    private readonly docs: AliasedDocumentStore,
    private readonly progress: Progress,
    private readonly options: RebuilderOptions = {},
  ) {
    this.live = options.live ?? NO_LIVE_PROJECTIONS;
    this.chunk = options.live ? SERVING_CHUNK : CHUNK;
    // Each write holds LMDB's one writer, and runs on the thread that answers requests.
    this.writeStep = options.writeStep ?? (options.live ? SERVING_CHUNK : STAGED_STEP);
    this.malformed =
      options.malformed ?? ((event, reason) => process.stderr.write(`malformed stored event skipped: ${event.type} ${event.id} in ${event.streamId}: ${reason}\n`));
  }

  async rebuild(models: readonly ReadModel[]): Promise<{ results: RebuildResult[]; stats: RebuildStats }> {
    const stamp = `${Date.now().toString(36)}${Math.floor(Math.random() * 36 ** 3).toString(36)}`;
    const fresh = await AliasedDocumentStore.open(this.docs.inner);
    const renames: Array<{ logical: string; physical: string; old: string }> = [];
    for (const m of models) {
      for (const logical of m.collections) {
        const physical = `${logical}__${stamp}`;
        renames.push({ logical, physical, old: this.docs.physical(logical) });
        fresh.adopt(logical, physical);
        await this.docs.inner.collection(physical).deleteMany({});
      }
    }
    const names = models.map((m) => m.name);
    let paused = false;
    let swapped = false;
    let thread: Promise<{ malformed: MalformedEvent[] }> | undefined;
    this.reported.clear();
    try {
      const replaying = replayingOf(models);
      for (const { projection } of replaying) await projection.setup?.(fresh);

      // 1. The log up to its head, the staged models folded in memory and written once; the
      // models with a thread of their own fold the same part of the log there meanwhile.
      const head = await this.events.headPosition();
      const started = performance.now();
      let count = 0;
      this.progress.start(head);
      const paths = this.options.thread;
      const apart = paths && models.length > 1 ? replaying.filter((r) => r.model.ownThread === true && r.staged) : [];
      const onThread = apart.map((r) => r.model.name);
      if (paths && apart.length > 0) {
        const physical = Object.fromEntries(renames.filter((r) => apart.some((a) => a.model.collections.includes(r.logical))).map((r) => [r.logical, r.physical]));
        thread = foldOnThread({ paths, models: onThread, physical, upTo: head, writeStep: this.writeStep });
      }
      const here = replaying.filter((r) => !apart.includes(r));
      let last = await this.foldInto(here, fresh, head, (position, n) => this.progress.advance(position, (count += n)));
      if (thread) {
        for (const m of (await thread).malformed) {
          if (this.reported.has(m.id)) continue;
          this.reported.add(m.id);
          this.malformed(m, m.reason);
        }
        thread = undefined;
        // A projection that keeps state in memory loads it from its collections (setup): the
        // thread's instance folded the events, this one goes on from what it wrote.
        for (const r of apart) await r.projection.setup?.(fresh);
      }
      // 2. What was appended meanwhile, straight into the fresh collections, until little is left.
      for (let round = 0; round < 10; round++) {
        const before = count;
        last = await this.replay(replaying, fresh, last, null, (position, n) => this.progress.advance(position, (count += n)));
        if (count - before < this.chunk) break;
      }
      const reached = await this.live.pause(names);
      paused = true;
      // 3. Halted: the last events, up to where the live projections stood at least.
      do last = await this.replay(replaying, fresh, last, null, (position, n) => this.progress.advance(position, (count += n)));
      while (last < reached);
      const seconds = (performance.now() - started) / 1000;
      this.progress.end(count, seconds);

      const after = new Map<string, Checksum>();
      for (const m of models) after.set(m.name, await checksum(fresh, m.collections));
      // 4. The swap: aliases and checkpoints together.
      const swap: WriteOp[] = renames.map((r) => this.docs.aliasOp(r.logical, r.physical));
      // The floor stored for other nodes may stand above where the rebuilt projections now start.
      swap.push({ collection: CHECKPOINTS, op: 'deleteOne', filter: { _id: PROGRESS_FLOOR } });
      if (last >= 0n) {
        for (const { projection: p } of replaying) {
          swap.push({ collection: CHECKPOINTS, op: 'replaceOne', filter: { _id: p.name }, doc: { _id: p.name, position: last.toString() }, upsert: true });
        }
      }
      await this.docs.inner.batch(swap, { durable: true });
      for (const r of renames) this.docs.adopt(r.logical, r.physical);
      swapped = true;
      await this.live.resume(names);

      // The old collections are read no more (after a grace for reads in flight): their checksum, then empty them.
      const old = await AliasedDocumentStore.open(this.docs.inner);
      for (const r of renames) old.adopt(r.logical, r.old);
      const results: RebuildResult[] = [];
      for (const m of models) results.push({ name: m.name, before: await checksum(old, m.collections), after: after.get(m.name) as Checksum });
      if (this.options.dropAfterMs) await new Promise((resolve) => setTimeout(resolve, this.options.dropAfterMs));
      for (const r of renames) await this.empty(r.old);
      return { results, stats: { events: count, seconds, onThread } };
    } catch (err) {
      // A thread still folding would write into collections about to be emptied: it is let
      // finish (its fold is bounded), not cut off inside a write transaction.
      await thread?.catch(() => undefined);
      if (!swapped) {
        // The old models still serve: the projections go on with them, the half-built ones go.
        if (paused) await this.live.resume(names);
        for (const r of renames) await this.empty(r.physical).catch(() => undefined);
      }
      throw err;
    }
  }

  /**
   * Phase 1 of a rebuild for these models alone, as a thread of their own runs it: the log up to
   * `upTo` folded in memory, the folded documents written into the fresh collections `fresh`
   * names (created and set up by the rebuild that asked). Answers the last position read.
   */
  async foldUpTo(models: readonly ReadModel[], fresh: AliasedDocumentStore, upTo: bigint): Promise<bigint> {
    const replaying = replayingOf(models);
    for (const { projection } of replaying) await projection.setup?.(fresh);
    return this.foldInto(replaying, fresh, upTo, () => undefined);
  }

  private async foldInto(replaying: readonly Replaying[], fresh: AliasedDocumentStore, upTo: bigint, advanced: (position: bigint, events: number) => void): Promise<bigint> {
    const staged = new StagedFold();
    const last = await this.replay(replaying, fresh, -1n, staged, advanced, upTo);
    await this.writeStaged(staged, fresh);
    return last;
  }

  /** Folds the log after `from` (up to `upTo`, if given) into the fresh models; answers the last position read. */
  private async replay(
    replaying: readonly Replaying[],
    fresh: AliasedDocumentStore,
    from: bigint,
    staged: StagedFold | null,
    advanced: (position: bigint, events: number) => void,
    upTo?: bigint,
  ): Promise<bigint> {
    let last = from;
    // One batch in flight: its commit overlaps reading and folding the next step.
    let writing: Promise<void> = Promise.resolve();
    try {
      for (;;) {
        if (this.options.live) await new Promise((resolve) => setImmediate(resolve));
        // A projection that reads (ReadingApply) sees its own writes so far: the commit in flight
        // and the step's writes before the event are committed before it reads.
        const readFresh = (pending: WriteOp[]): ReadDocs => async (collection, filter) => {
          await writing;
          if (pending.length > 0) await fresh.batch(pending.splice(0));
          return fresh.collection(collection).find(filter);
        };
        const step: Step = { ops: [], inserts: new Map() };
        // The step's events are read a part at a time, each folded before the next is read: the
        // events of a part can be collected once folded, where a whole step of them, decoded at
        // once, outlived every young-generation collection made while it was folded.
        let folded = 0;
        let ended = false;
        while (folded < this.chunk) {
          let batch = await this.events.readAll({ after: last, maxCount: Math.min(READ_PART, this.chunk - folded) });
          if (upTo !== undefined && batch.length > 0 && (batch[batch.length - 1] as RecordedEvent).position > upTo) {
            batch = batch.filter((e) => e.position <= upTo);
          }
          if (batch.length === 0) {
            ended = true;
            break;
          }
          await this.fold(batch, replaying, staged, readFresh, step);
          last = (batch[batch.length - 1] as RecordedEvent).position;
          folded += batch.length;
          advanced(last, batch.length);
        }
        await writing;
        if (step.ops.length > 0 || step.inserts.size > 0) {
          writing = this.write(fresh, step.inserts, step.ops);
          // Awaited at the next step; until then a failure must not count as unhandled.
          writing.catch(() => undefined);
        }
        if (ended) {
          await writing;
          return last;
        }
      }
    } finally {
      await writing.catch(() => undefined);
    }
  }

  /**
   * Empties a collection in steps of one transaction each, with a turn of the event loop between:
   * one delete of a whole large model would hold the serving thread and the single writer.
   */
  private async empty(physical: string): Promise<void> {
    const collection = this.docs.inner.collection(physical);
    for (;;) {
      const ids = (await collection.find({}, { limit: DELETE_STEP })).map((d) => d._id);
      if (ids.length === 0) return;
      await this.docs.inner.batch([{ collection: physical, op: 'deleteMany', filter: { _id: { $in: ids } } }]);
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /**
   * One step's writes: the append-only models' new documents first (an insertMany each, the
   * cheapest write there is), then the other models' operations in one batch. An append-only
   * model writes nothing else, so the order between the two never matters.
   */
  private async write(fresh: AliasedDocumentStore, inserts: ReadonlyMap<string, Document[]>, ops: WriteOp[]): Promise<void> {
    for (const [collection, docs] of inserts) await fresh.collection(collection).insertMany(docs);
    if (ops.length > 0) await fresh.batch(ops);
  }

  /**
   * Events of a step through every model: the staged ones in memory, the writes of the others
   * added to the step's (an append-only model's as new documents by collection).
   */
  private async fold(
    batch: readonly RecordedEvent[],
    replaying: readonly Replaying[],
    staged: StagedFold | null,
    readFresh: (pending: WriteOp[]) => ReadDocs,
    step: Step,
  ): Promise<void> {
    const { ops, inserts } = step;
    const readStaged: ReadDocs = async (collection, filter) => (staged as StagedFold).find(collection, filter);
    for (const raw of batch) {
      let typed: ReturnType<typeof checkedEvent> | undefined;
      for (const r of replaying) {
        if (!r.projection.eventTypes.has(raw.type)) continue;
        typed ??= checkedEvent(raw);
        if (!typed.ok) break;
        const inMemory = staged !== null && r.staged;
        const reading = r.projection.reading?.needs(typed.event) ? r.projection.reading : undefined;
        const writes = reading ? await reading.apply(typed.event, inMemory ? readStaged : readFresh(ops)) : r.projection.apply(typed.event);
        for (const op of writes) {
          if (inMemory) (staged as StagedFold).apply(op);
          else if (r.appendOnly) insertionInto(inserts, op);
          else ops.push(op);
        }
      }
      // The live runner passes over the same events the same way: a rebuild reproduces it.
      if (typed && !typed.ok && !this.reported.has(raw.id)) {
        this.reported.add(raw.id);
        this.malformed(raw, typed.reason);
      }
    }
  }

  /** The folded documents, handed over as they are (the fold is done with them), a step at a time. */
  private async writeStaged(staged: StagedFold, fresh: AliasedDocumentStore): Promise<void> {
    for (const [collection, docs] of staged.collections()) {
      let step: Document[] = [];
      for (const doc of docs) {
        step.push(doc);
        if (step.length >= this.writeStep) {
          await fresh.collection(collection).insertMany(step);
          step = [];
        }
      }
      if (step.length > 0) await fresh.collection(collection).insertMany(step);
    }
  }
}

function replayingOf(models: readonly ReadModel[]): Replaying[] {
  return models.map((model) => ({ model, projection: model.projection(), staged: model.staged, appendOnly: model.appendOnly === true }));
}

/**
 * An append-only model's upsert of a new document, as the insert it is in a collection the
 * rebuild fills from empty: no lookup first. Were the _id there already, the insert fails loudly
 * (a duplicate key) rather than quietly differ from the live projection; any other write breaks
 * the model's promise and stops the rebuild.
 */
function insertionInto(inserts: Map<string, Document[]>, op: WriteOp): void {
  if (op.op !== 'replaceOne' || op.upsert !== true || Object.keys(op.filter).length !== 1 || op.filter._id !== op.doc._id) {
    throw new Error(`append-only read model wrote ${op.op} to ${op.collection}: only upserts of a new document by _id are inserts`);
  }
  let docs = inserts.get(op.collection);
  if (!docs) inserts.set(op.collection, (docs = []));
  docs.push(op.doc);
}
