import {
  BACKWARDS,
  END,
  EventStoreDBClient,
  FORWARDS,
  START,
  StreamNotFoundError,
  WrongExpectedVersionError,
  excludeSystemEvents,
  type AllStreamResolvedEvent,
  type ResolvedEvent,
} from '@eventstore/db-client';
import { WrongExpectedRevisionError } from '../port.js';
import type {
  AllSubscription,
  AppendResult,
  EventData,
  EventStore,
  ExpectedRevision,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  StreamMetadata,
  SubscribeOptions,
} from '../port.js';
import { allPosition, isSystemEvent, logPosition, toClientEvents, toRecorded } from './codec.js';
import { SharedTail } from './shared-tail.js';
import { EsdbSubscription } from './subscription.js';
import { TailSubscription } from './tail-subscription.js';

export interface EsdbEventStoreOptions {
  /** An EventStoreDB / KurrentDB connection string, e.g. esdb://host:2113?tls=false. */
  url: string;
  /** Events the shared tail keeps at least (shared-tail.ts); tests make it small. */
  tailCapacity?: number;
}

/** $all is read in pages of this many events, so no read holds an unbounded answer. */
const PAGE = 1000;

/**
 * The event store on EventStoreDB (20+) or KurrentDB through `@eventstore/db-client`.
 *
 * Group commit: the client sends every append of one connection over one BatchAppend call when
 * the server offers it, so concurrent appends to different streams are pipelined on one HTTP/2
 * stream and the server's writer commits them together; nothing here needs to queue them.
 *
 * System events ($metadata and the server's own $-streams) are invisible through this port:
 * subscriptions filter them on the server, reads of $all skip them.
 */
export class EsdbEventStore implements EventStore {
  private closed?: Promise<void>;
  private readonly subscriptions = new Set<TailSubscription>();
  /** One subscription to the head of $all for every subscriber of this process (shared-tail.ts). */
  private readonly tail: SharedTail;
  /** Appends sent and not yet answered: close waits for them, so none is cut off mid-flight. */
  private readonly appending = new Set<Promise<unknown>>();

  private constructor(
    private readonly client: EventStoreDBClient,
    tailCapacity?: number,
  ) {
    this.tail = new SharedTail({ headPosition: () => this.headPosition(), subscribe: (after) => this.follow(after) }, tailCapacity);
  }

  static async open(options: EsdbEventStoreOptions): Promise<EsdbEventStore> {
    // throwOnAppendFailure stays true (the default): a wrong expected revision comes as the typed
    // error with the stream's revision, which 6.2.1's BatchAppend result path would misreport.
    const client = EventStoreDBClient.connectionString(options.url);
    const store = new EsdbEventStore(client, options.tailCapacity);
    // Fails now on an unreachable server, not on the first request.
    await store.headPosition().catch(async (error: unknown) => {
      await client.dispose();
      throw error;
    });
    return store;
  }

  async append(streamId: string, events: EventData[], expected: ExpectedRevision): Promise<AppendResult> {
    this.assertOpen();
    const sent = this.client.appendToStream(streamId, toClientEvents(streamId, events), { expectedRevision: expected });
    this.appending.add(sent);
    let result;
    try {
      result = await sent;
    } catch (error) {
      if (error instanceof WrongExpectedVersionError) {
        const actual = error.actualVersion === 'no_stream' ? -1n : BigInt(error.actualVersion);
        throw new WrongExpectedRevisionError(streamId, expected, actual);
      }
      throw error;
    } finally {
      this.appending.delete(sent);
    }
    const nextRevision = result.nextExpectedRevision;
    // Servers answer an idempotent retry without a usable position: the stream has it. An empty
    // append wrote nothing: like the embedded store, it answers the log's head.
    const position = logPosition(result.position) ?? (events.length === 0 ? await this.headPosition() : await this.positionOf(streamId, nextRevision));
    return { nextRevision, position };
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    this.assertOpen();
    const forwards = (options.direction ?? 'forwards') === 'forwards';
    const maxCount = countLimit(options.maxCount);
    if (maxCount === 0) return [];
    const reading = this.client.readStream(streamId, {
      direction: forwards ? FORWARDS : BACKWARDS,
      fromRevision: options.fromRevision ?? (forwards ? START : END),
      ...(maxCount === Infinity ? {} : { maxCount }),
    });
    const events: RecordedEvent[] = [];
    try {
      for await (const resolved of reading as AsyncIterable<ResolvedEvent>) {
        const recorded = toRecorded(resolved);
        if (recorded) events.push(recorded);
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return [];
      throw error;
    }
    return events;
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    this.assertOpen();
    const maxCount = countLimit(options.maxCount);
    const events: RecordedEvent[] = [];
    let cursor = options.after ?? -1n;
    while (events.length < maxCount) {
      // Reads of $all include their start position: the event at the cursor comes again, dropped here.
      const page = await this.readAllPage(cursor);
      for (const resolved of page) {
        const recorded = toRecorded(resolved);
        if (recorded && recorded.position > cursor && events.length < maxCount) events.push(recorded);
      }
      const last = logPosition(page.at(-1)?.event?.position);
      if (page.length < PAGE || last === undefined || last <= cursor) break;
      cursor = last;
    }
    return events;
  }

  subscribeToAll(options: SubscribeOptions = {}): AllSubscription {
    this.assertOpen();
    const subscription: TailSubscription = new TailSubscription(this.tail, (o) => this.readAll(o), options.after ?? -1n, () => this.subscriptions.delete(subscription));
    this.subscriptions.add(subscription);
    return subscription;
  }

  /** The client's own subscription to $all after a position, resubscribing after drops: the shared tail's source. */
  private follow(after: bigint): EsdbSubscription {
    const open = (from: bigint) => this.client.subscribeToAll({ fromPosition: from < 0n ? START : allPosition(from), filter: excludeSystemEvents() });
    return new EsdbSubscription(open, after);
  }

  async setStreamMetadata(streamId: string, metadata: StreamMetadata): Promise<void> {
    this.assertOpen();
    const { maxAgeSeconds } = metadata;
    if (maxAgeSeconds !== undefined && !(Number.isFinite(maxAgeSeconds) && maxAgeSeconds > 0)) {
      throw new Error('maxAgeSeconds must be a positive number');
    }
    // Keep what others set on the stream ($tb after a delete, ACLs): only $maxAge is ours.
    const { metadata: current = {} } = await this.client.getStreamMetadata(streamId);
    const { maxAge: previous, ...others } = current;
    // Every node sets its session streams' retention at start: a write only when it changes.
    if (previous === maxAgeSeconds) return;
    await this.client.setStreamMetadata(streamId, maxAgeSeconds === undefined ? others : { ...others, maxAge: maxAgeSeconds });
  }

  async getStreamMetadata(streamId: string): Promise<StreamMetadata> {
    this.assertOpen();
    const { metadata } = await this.client.getStreamMetadata(streamId);
    const maxAge = metadata?.maxAge;
    return typeof maxAge === 'number' ? { maxAgeSeconds: maxAge } : {};
  }

  /** The last of our events: a position only system events follow is one no subscriber sees. */
  async headPosition(): Promise<bigint> {
    this.assertOpen();
    let from: typeof END | { commit: bigint; prepare: bigint } = END;
    for (;;) {
      const page: AllStreamResolvedEvent[] = [];
      for await (const resolved of this.client.readAll({ direction: BACKWARDS, fromPosition: from, maxCount: PAGE })) page.push(resolved);
      for (const resolved of page) {
        const event = resolved.event;
        if (event && !isSystemEvent(event.type, event.streamId)) return logPosition(event.position) ?? -1n;
      }
      const last = page.at(-1)?.event?.position;
      if (page.length < PAGE || !last) return -1n;
      from = last;
    }
  }

  close(): Promise<void> {
    this.closed ??= (async () => {
      await Promise.allSettled([...this.subscriptions].map((subscription) => subscription.unsubscribe()));
      await this.tail.stop();
      await Promise.allSettled([...this.appending]);
      await this.client.dispose();
    })();
    return this.closed;
  }

  private async readAllPage(after: bigint): Promise<AllStreamResolvedEvent[]> {
    const page: AllStreamResolvedEvent[] = [];
    const reading = this.client.readAll({ direction: FORWARDS, fromPosition: after < 0n ? START : allPosition(after), maxCount: PAGE });
    for await (const resolved of reading) page.push(resolved);
    return page;
  }

  private async positionOf(streamId: string, revision: bigint): Promise<bigint> {
    const [event] = await this.readStream(streamId, { fromRevision: revision, maxCount: 1 });
    if (!event) throw new Error(`stream ${streamId}: revision ${revision} was acknowledged but cannot be read`);
    return event.position;
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('event store is closed');
  }
}

function countLimit(maxCount: number | undefined): number {
  if (maxCount === undefined) return Infinity;
  if (!Number.isInteger(maxCount) || maxCount < 0) throw new Error('maxCount must be a non-negative integer');
  return maxCount;
}
