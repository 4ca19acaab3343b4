import type { Document, DocumentStore, WriteOp } from '../../infra/docstore/port.js';
import type { RecordedEvent, RecordedOf } from '../../domain/recorded.js';
import { addedIncrements } from '../added-increments.js';
import { occurredAt, type Projection } from '../projection.js';
import { bucketId, bucketStart, splitSeconds, startIso, type BucketSize } from './buckets.js';
import { latencyBucket } from './histogram.js';
import { idOfStream } from '../../domain/streams.js';

export const STATS = 'stats_buckets';
/** Each instance's open connection, so connected time survives a restart of the projection. */
export const STATS_SESSIONS = 'stats_sessions';

/** One instance's counts over one UTC hour or day. */
export interface StatsBucketDoc extends Document {
  /** `<instanceId>|<hour|day>|<start>` */
  _id: string;
  instance_id: string;
  size: BucketSize;
  start: string;
  messages_in?: number;
  messages_out?: number;
  media_in?: number;
  media_out?: number;
  deliveries_ok?: number;
  deliveries_failed?: number;
  /** Delivered latencies: bucket index (see histogram.ts) → count. */
  latency?: Record<string, number>;
  connected_seconds?: number;
}

export interface StatsSessionDoc extends Document {
  _id: string;
  /** Epoch ms the connection opened. */
  since: number;
  /** Log position of the disconnect that closed it; null while open. */
  closed_at: string | null;
}

const SIZES: readonly BucketSize[] = ['hour', 'day'];

type Counter = 'messages_in' | 'messages_out' | 'media_in' | 'media_out' | 'deliveries_ok' | 'deliveries_failed' | 'connected_seconds' | `latency.${number}`;

function instanceOf(event: RecordedEvent): string {
  const id = event.metadata.instanceId;
  return typeof id === 'string' ? id : idOfStream(event.streamId);
}

function increments(instanceId: string, atMs: number, counts: Partial<Record<Counter, number>>): WriteOp[] {
  return SIZES.map((size) => {
    const start = bucketStart(atMs, size);
    return {
      collection: STATS,
      op: 'updateOne',
      filter: { _id: bucketId(instanceId, size, start) },
      update: { $inc: counts, $setOnInsert: { instance_id: instanceId, size, start: startIso(start) } },
      upsert: true,
    };
  });
}

/**
 * Counts per instance and per UTC hour and day, from the log: messages and media each way, webhook
 * outcomes with a latency histogram, and connected time split across the buckets it spans.
 *
 * Connected time needs the moment the connection opened when it closes; that is kept in memory and
 * in STATS_SESSIONS, written in the same batch, so a restart reloads exactly what was committed. A
 * disconnect read again after a failed commit finds the same open connection (it is marked closed
 * at the disconnect's position, not forgotten) and counts the same seconds. A connect while one is
 * already open (a restart without a recorded disconnect) starts over: the gap is not counted.
 */
export class StatsProjection implements Projection {
  readonly name = 'stats';
  readonly eventTypes = new Set([
    'MessageReceived',
    'MessageSent',
    'WebhookDelivered',
    'WebhookDeliveryFailed',
    'SessionConnected',
    'SessionDisconnected',
    'SessionLoggedOut',
  ]);
  private readonly open = new Map<string, { since: number; closedAt: string | null }>();

  async setup(docs: DocumentStore): Promise<void> {
    await docs.collection(STATS).createIndex({ name: 'instance_size_start', keys: { instance_id: 1, size: 1, start: 1 } });
    this.open.clear();
    for (const s of await docs.collection<StatsSessionDoc>(STATS_SESSIONS).find({})) this.open.set(s._id, { since: s.since, closedAt: s.closed_at });
  }

  /** Buckets change only by upserted increments: a batch's increments of one bucket are one write. */
  compact(ops: WriteOp[]): WriteOp[] {
    return addedIncrements(STATS, ops);
  }

  apply(event: RecordedEvent): WriteOp[] {
    const instanceId = instanceOf(event);
    const at = Date.parse(occurredAt(event));
    switch (event.type) {
      // A history sync's messages are old news: they happened before, and were counted then if at all.
      case 'MessageReceived':
        if (event.data.upsert === 'append') return [];
        return this.message(event, instanceId, at);
      case 'MessageSent':
        return this.message(event, instanceId, at);
      case 'WebhookDelivered':
        return increments(instanceId, at, { deliveries_ok: 1, [`latency.${latencyBucket(Number(event.data.latency_ms))}`]: 1 });
      case 'WebhookDeliveryFailed':
        return increments(instanceId, at, { deliveries_failed: 1 });
      case 'SessionConnected':
        this.open.set(instanceId, { since: at, closedAt: null });
        return [this.saveSession(instanceId, at, null)];
      default:
        return this.close(instanceId, at, event.position.toString());
    }
  }

  private message(event: RecordedOf<'MessageReceived' | 'MessageSent'>, instanceId: string, at: number): WriteOp[] {
    const message = event.data.message;
    const out = event.type === 'MessageSent' || message.from_me === true;
    const counts: Partial<Record<Counter, number>> = { [out ? 'messages_out' : 'messages_in']: 1 };
    if (message.media) counts[out ? 'media_out' : 'media_in'] = 1;
    return increments(instanceId, at, counts);
  }

  private close(instanceId: string, at: number, position: string): WriteOp[] {
    const state = this.open.get(instanceId);
    if (!state || (state.closedAt !== null && state.closedAt !== position)) return [];
    state.closedAt = position;
    const ops = [this.saveSession(instanceId, state.since, position)];
    for (const size of SIZES) {
      for (const { start, seconds } of splitSeconds(state.since, at, size)) {
        ops.push({
          collection: STATS,
          op: 'updateOne',
          filter: { _id: bucketId(instanceId, size, start) },
          update: { $inc: { connected_seconds: seconds }, $setOnInsert: { instance_id: instanceId, size, start: startIso(start) } },
          upsert: true,
        });
      }
    }
    return ops;
  }

  private saveSession(instanceId: string, since: number, closedAt: string | null): WriteOp {
    const doc: StatsSessionDoc = { _id: instanceId, since, closed_at: closedAt };
    return { collection: STATS_SESSIONS, op: 'replaceOne', filter: { _id: instanceId }, doc, upsert: true };
  }
}
