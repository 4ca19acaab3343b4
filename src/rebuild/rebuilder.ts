import { AliasedDocumentStore } from '../infra/docstore/aliased-document-store.js';
import type { Filter, WriteOp } from '../infra/docstore/port.js';
import { typedEvent } from '../domain/recorded.js';
import type { EventStore, RecordedEvent } from '../infra/eventstore/port.js';
import { CHECKPOINTS } from '../projections/runner.js';
import { checksum } from './checksum.js';
import type { Progress } from './progress.js';
import type { ReadModel } from './read-models.js';
import { StagedFold } from './staged-fold.js';

export interface RebuildResult {
  name: string;
  before: { sha256: string; documents: number };
  after: { sha256: string; documents: number };
}

export interface RebuildStats {
  events: number;
  seconds: number;
}

/** Log events read per step; each step's writes of every read model commit in one batch. */
const CHUNK = 5_000;

/**
 * Rebuilds read models from the log into fresh collections, then points their logical names at
 * them together with the projections' checkpoints, in one batch: a reader sees the old model or
 * the new one, never a half-built one, and the runner goes on from where the rebuild stopped.
 * The log is read once for all the models asked for.
 */
export class Rebuilder {
  constructor(
    private readonly events: EventStore,
    private readonly docs: AliasedDocumentStore,
    private readonly progress: Progress,
    /** Told of each stored event that does not match its schema, and so is left out. */
    private readonly malformed: (event: RecordedEvent, reason: string) => void = (event, reason) =>
      process.stderr.write(`malformed stored event skipped: ${event.type} ${event.id} in ${event.streamId}: ${reason}\n`),
  ) {}

  async rebuild(models: readonly ReadModel[]): Promise<{ results: RebuildResult[]; stats: RebuildStats }> {
    const before = new Map<string, RebuildResult['before']>();
    for (const m of models) before.set(m.name, await checksum(this.docs, m.collections));

    const stamp = Date.now().toString(36);
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
    const projections = models.map((m) => ({ projection: m.projection(), staged: m.staged }));
    for (const { projection } of projections) await projection.setup?.(fresh);
    const staged = new StagedFold();

    const head = await this.events.headPosition();
    const started = performance.now();
    let last = -1n;
    let count = 0;
    this.progress.start(head);
    for (;;) {
      const batch = await this.events.readAll({ after: last, maxCount: CHUNK });
      if (batch.length === 0) break;
      const ops: WriteOp[] = [];
      // A projection that reads (ReadingApply) sees its own writes so far: folded in memory, or committed first.
      const readStaged = async (collection: string, filter: Filter) => staged.find(collection, filter);
      const readFresh = async (collection: string, filter: Filter) => {
        if (ops.length > 0) await fresh.batch(ops.splice(0));
        return fresh.collection(collection).find(filter);
      };
      for (const raw of batch) {
        const readers = projections.filter((p) => p.projection.eventTypes.has(raw.type));
        if (readers.length === 0) continue;
        const typed = typedEvent(raw);
        if (!typed.ok) {
          // The live runner passes over the same events the same way: a rebuild reproduces it.
          this.malformed(raw, typed.reason);
          continue;
        }
        for (const { projection, staged: inMemory } of readers) {
          const reading = projection.reading?.needs(typed.event) ? projection.reading : undefined;
          for (const op of reading ? await reading.apply(typed.event, inMemory ? readStaged : readFresh) : projection.apply(typed.event)) {
            if (inMemory) staged.apply(op);
            else ops.push(op);
          }
        }
      }
      if (ops.length > 0) await fresh.batch(ops);
      last = (batch[batch.length - 1] as RecordedEvent).position;
      count += batch.length;
      this.progress.advance(last, count);
    }
    let inserts: WriteOp[] = [];
    for (const [collection, doc] of staged.documents()) {
      inserts.push({ collection, op: 'insertOne', doc });
      if (inserts.length >= CHUNK) {
        await fresh.batch(inserts);
        inserts = [];
      }
    }
    if (inserts.length > 0) await fresh.batch(inserts);
    const seconds = (performance.now() - started) / 1000;
    this.progress.end(count, seconds);

    // The swap: aliases and checkpoints together.
    const swap: WriteOp[] = renames.map((r) => this.docs.aliasOp(r.logical, r.physical));
    if (last >= 0n) {
      for (const { projection: p } of projections) {
        swap.push({ collection: CHECKPOINTS, op: 'replaceOne', filter: { _id: p.name }, doc: { _id: p.name, position: last.toString() }, upsert: true });
      }
    }
    await this.docs.inner.batch(swap, { durable: true });
    for (const r of renames) this.docs.adopt(r.logical, r.physical);
    // The old collections hold nothing anyone reads any more.
    for (const r of renames) await this.docs.inner.collection(r.old).deleteMany({});

    const results: RebuildResult[] = [];
    for (const m of models) results.push({ name: m.name, before: before.get(m.name) as RebuildResult['before'], after: await checksum(this.docs, m.collections) });
    return { results, stats: { events: count, seconds } };
  }
}
