import type { Logger } from 'pino';
import { isOwnEvent, type Decider, type DomainEvent } from '../domain/decider.js';
import { auditMetadata, type CommandContext } from '../domain/audit.js';
import { conflict } from '../domain/errors.js';
import { typedEvent, type StoredEvent } from '../domain/recorded.js';
import { BoundedMap } from '../infra/bounded-map.js';
import type { Clock } from '../infra/clock.js';
import {
  WrongExpectedRevisionError,
  type EventData,
  type EventStore,
} from '../infra/eventstore/port.js';
import type { IdGenerator } from '../infra/ids.js';
import { KeyedLock } from './keyed-lock.js';


export interface CommandResult<Event> {
  events: Event[];
  /** Commit position of the last appended event; null when the decision changed nothing. */
  position: bigint | null;
}

interface Cached {
  revision: bigint;
  state: unknown;
}

const MAX_ATTEMPTS = 4;
const CACHE_LIMIT = 2000;

/**
 * The one command handler: rehydrate the stream, decide, append with the expected revision,
 * retry on a concurrent write, 409 after that. Folded states are cached per stream, so a
 * long stream is read only from where the cache stops.
 */
export class CommandHandler {
  private readonly cache = new BoundedMap<string, Cached>(CACHE_LIMIT);
  private readonly lock = new KeyedLock();

  constructor(
    private readonly store: EventStore,
    private readonly ids: IdGenerator,
    private readonly clock: Clock,
    /** Where a malformed stored event is reported; without one, as a process warning. */
    private readonly logger?: Pick<Logger, 'error'>,
  ) {}

  async handle<State, Command, Event extends StoredEvent>(
    streamId: string,
    decider: Decider<State, Command, Event>,
    command: Command,
    context: CommandContext,
  ): Promise<CommandResult<Event>> {
    return this.lock.run(streamId, () => this.decideAndAppend(streamId, decider, command, context));
  }

  private async decideAndAppend<State, Command, Event extends StoredEvent>(
    streamId: string,
    decider: Decider<State, Command, Event>,
    command: Command,
    context: CommandContext,
  ): Promise<CommandResult<Event>> {
    for (let attempt = 1; ; attempt++) {
      const { state, revision } = await this.load(streamId, decider);
      const events = decider.decide(command, state);
      if (events.length === 0) return { events, position: null };
      try {
        const result = await this.store.append(
          streamId,
          events.map((e) => this.toEventData(e, context)),
          revision === -1n ? 'no_stream' : revision,
        );
        this.cache.set(streamId, { revision: result.nextRevision, state: events.reduce(decider.evolve, state) });
        return { events, position: result.position };
      } catch (err) {
        if (!(err instanceof WrongExpectedRevisionError)) throw err;
        this.cache.delete(streamId);
        if (attempt >= MAX_ATTEMPTS) throw conflict('concurrent changes to the same resource; retry the request');
      }
    }
  }

  /** Folds a stream for a read that needs the decider's view (no append). */
  async load<State, Command, Event extends StoredEvent>(
    streamId: string,
    decider: Decider<State, Command, Event>,
  ): Promise<{ state: State; revision: bigint }> {
    const cached = this.cache.get(streamId);
    let state = cached ? (cached.state as State) : decider.initialState();
    let revision = cached ? cached.revision : -1n;
    const recorded = await this.store.readStream(streamId, { fromRevision: revision + 1n });
    for (const raw of recorded) {
      // A skipped event still counts for the revision the append expects.
      revision = raw.revision;
      const typed = typedEvent(raw);
      if (!typed.ok) {
        this.malformed(raw.id, raw.type, streamId, typed.reason);
        continue;
      }
      // Checked against its schema, then by its type: what else the stream carries is not the
      // decider's to fold (sign-ins beside an account's decisions, an agent's replies).
      if (isOwnEvent(decider, typed.event)) state = decider.evolve(state, typed.event);
    }
    if (recorded.length > 0) this.cache.set(streamId, { revision, state });
    return { state, revision };
  }

  private malformed(eventId: string, type: string, streamId: string, reason: string): void {
    const fields = { eventId, type, streamId, reason };
    if (this.logger) this.logger.error(fields, 'malformed stored event left out of a fold');
    else process.emitWarning(`malformed stored event left out of a fold: ${JSON.stringify(fields)}`);
  }

  private toEventData(event: DomainEvent, context: CommandContext): EventData {
    return { id: this.ids.uuid(), type: event.type, data: { ...event.data }, metadata: auditMetadata(context, context.occurredAt ?? this.clock.now()) };
  }
}
