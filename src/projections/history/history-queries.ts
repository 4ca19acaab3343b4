import type { Actor } from '../../domain/actor.js';
import type { DocumentStore, Filter } from '../../infra/docstore/port.js';
import type { EventStore, RecordedEvent } from '../../infra/eventstore/port.js';
import { HISTORY, POSITION_DIGITS, type HistoryEntryDoc } from './history-projection.js';
import { redactObject } from './redaction.js';

/** One event as history shows it (CONTRACT.md, History). */
export interface HistoryEvent {
  position: string;
  id: string;
  type: string;
  stream: string;
  revision: number;
  recorded_at: string;
  actor: Actor;
  correlation_id: string | null;
  causation_id: string | null;
  /** Redacted; null once retention removed the event's contents from the log. */
  data: Record<string, unknown> | null;
}

export interface HistoryPage {
  events: HistoryEvent[];
  next: string | null;
}

export interface HistoryRequest {
  /** An earlier page's `position` or `next`: the page starts after it. */
  after?: string;
  limit: number;
  types?: readonly string[];
}

export type HistoryOwner = { instanceId: string } | { accountId: string };

/**
 * Pages of an instance's or an account's history. The entries come from the history index in log
 * order; the data of just those events is read from their streams, a run of consecutive revisions
 * of one stream in one read.
 */
export class HistoryQueries {
  constructor(
    private readonly docs: DocumentStore,
    private readonly events: EventStore,
  ) {}

  async page(owner: HistoryOwner, request: HistoryRequest): Promise<HistoryPage> {
    const filter: Filter = 'instanceId' in owner ? { instance_id: owner.instanceId } : { account_id: owner.accountId };
    if (request.after !== undefined) filter._id = { $gt: request.after.padStart(POSITION_DIGITS, '0') };
    if (request.types && request.types.length > 0) filter.type = { $in: [...request.types] };
    const entries = await this.docs.collection<HistoryEntryDoc>(HISTORY).find(filter, { sort: { _id: 1 }, limit: request.limit + 1 });
    const page = entries.slice(0, request.limit);
    const stored = await this.read(page);
    const events = page.map((entry) => present(entry, stored.get(entry._id)));
    return { events, next: entries.length > request.limit && events.length > 0 ? (events[events.length - 1] as HistoryEvent).position : null };
  }

  /** The stored events of the entries, by entry id; those retention removed are missing. */
  private async read(entries: readonly HistoryEntryDoc[]): Promise<Map<string, RecordedEvent>> {
    const found = new Map<string, RecordedEvent>();
    for (const run of runs(entries)) {
      const events = await this.events.readStream(run.stream, { fromRevision: BigInt(run.from), maxCount: run.ids.size });
      for (const event of events) {
        const id = run.ids.get(Number(event.revision));
        if (id !== undefined && event.id === id.eventId) found.set(id.entry, event);
      }
    }
    return found;
  }
}

type Run = { stream: string; from: number; ids: Map<number, { entry: string; eventId: string }> };

/**
 * Entries of one stream with consecutive revisions, however the instance's streams interleave in
 * the log: one read each. A stream's entries come in revision order, as the log holds them.
 */
function runs(entries: readonly HistoryEntryDoc[]): Run[] {
  const out: Run[] = [];
  const open = new Map<string, Run>();
  for (const e of entries) {
    let run = open.get(e.stream);
    if (!run || e.revision !== run.from + run.ids.size) {
      run = { stream: e.stream, from: e.revision, ids: new Map() };
      open.set(e.stream, run);
      out.push(run);
    }
    run.ids.set(e.revision, { entry: e._id, eventId: e.event_id });
  }
  return out;
}

function present(entry: HistoryEntryDoc, event: RecordedEvent | undefined): HistoryEvent {
  return {
    position: entry._id.replace(/^0+(?=\d)/, ''),
    id: entry.event_id,
    type: entry.type,
    stream: entry.stream,
    revision: entry.revision,
    recorded_at: entry.recorded_at,
    actor: entry.actor,
    correlation_id: entry.correlation_id,
    causation_id: entry.causation_id,
    data: event ? redactObject(event.data) : null,
  };
}
