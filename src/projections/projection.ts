import type { DocumentStore, WriteOp } from '../infra/docstore/port.js';
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
   * it decided only then: before, a failed commit could still take it back.
   */
  committed?(position: bigint): void;
}

/** Reads a required metadata timestamp, falling back to when the store recorded the event. */
export function occurredAt(event: RecordedEnvelope): string {
  const at = event.metadata.occurredAt;
  return typeof at === 'string' ? at : event.created.toISOString();
}
