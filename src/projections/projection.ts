import type { Document, DocumentStore, Filter, WriteOp } from '../infra/docstore/port.js';
import type { RecordedEnvelope, RecordedEvent } from '../domain/recorded.js';

/**
 * A read model or reactor fed from the global log. `apply` is pure: it turns one event into
 * the writes it implies (MongoDB update operators), and the runner does I/O, batching and the
 * checkpoint, so writes and checkpoint commit together.
 */
export interface Projection {
  readonly name: string;
  /** Event types it reads; every other event only moves its checkpoint. */
  readonly eventTypes: ReadonlySet<string>;
  /** Declares indexes; runs before the first event. */
  setup?(docs: DocumentStore): Promise<void>;
  /** Handed only events of `eventTypes` whose data matched their schema. */
  apply(event: RecordedEvent): WriteOp[];
  /**
   * Told once the writes of every event up to `position` are committed. A reactor hands on what
   * it decided only then: before, a failed commit could still take it back. Not told of a commit
   * of events it did not fold (none of `eventTypes`): it has nothing to hand on, and the workers
   * a hook wakes would read the store for nothing.
   */
  committed?(position: bigint): void;
  /**
   * The writes of a batch's events made fewer before they are written (issue 31: per-event work
   * done per batch), e.g. increments of one document added up. Must leave the read model as the
   * writes in order would. Not called where each event's writes are made idempotent on their own
   * position (MongoDB, RunnerOptions.idempotentWrites).
   */
  compact?(ops: WriteOp[]): WriteOp[];
  /** The rare events whose writes depend on what the read model holds; see ReadingApply. */
  readonly reading?: ReadingApply;
}

/** Documents of one of the projection's collections matching a filter, as its writes so far left them. */
export type ReadDocs = (collection: string, filter: Filter) => Promise<Document[]>;

/**
 * For an event whose writes depend on the read model's documents (two documents becoming one, which
 * update operators cannot express): for each event `needs` names, the runner (and the rebuild)
 * first commits the writes of every event before it, then calls this `apply` instead of the
 * projection's own. It only reads; its writes are decided from what it read and go with the batch.
 * `needs` should be rare: each such event costs a read and a commit of its own.
 */
export interface ReadingApply {
  needs(event: RecordedEvent): boolean;
  apply(event: RecordedEvent, read: ReadDocs): Promise<WriteOp[]>;
}

/** Reads a required metadata timestamp, falling back to when the store recorded the event. */
export function occurredAt(event: RecordedEnvelope): string {
  const at = event.metadata.occurredAt;
  return typeof at === 'string' ? at : event.created.toISOString();
}
