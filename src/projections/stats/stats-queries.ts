import type { DocumentStore } from '../../infra/docstore/port.js';
import { INSTANCES } from '../instances/instances-projection.js';
import { BUCKET_MS, bucketStart, splitSeconds, type BucketSize } from './buckets.js';
import { LATENCY_BUCKETS, p95 } from './histogram.js';
import { STATS, STATS_SESSIONS, type StatsBucketDoc, type StatsSessionDoc } from './stats-projection.js';

/** One bucket as the stats routes answer it (CONTRACT.md, statistics). */
export interface StatsBucket {
  start: string;
  messages_in: number;
  messages_out: number;
  media_in: number;
  media_out: number;
  deliveries_ok: number;
  deliveries_failed: number;
  delivery_p95_ms: number | null;
  connected_seconds: number;
}

export interface StatsRange {
  fromMs: number;
  toMs: number;
  size: BucketSize;
  nowMs: number;
}

type Sum = Omit<StatsBucket, 'start' | 'delivery_p95_ms'> & { latency: number[] };

const COUNTERS = ['messages_in', 'messages_out', 'media_in', 'media_out', 'deliveries_ok', 'deliveries_failed', 'connected_seconds'] as const;

/** Every bucket of the range, empty ones included, summed over the given instances. */
export class StatsQueries {
  constructor(private readonly docs: DocumentStore) {}

  forInstance(instanceId: string, range: StatsRange): Promise<StatsBucket[]> {
    return this.sum([instanceId], range);
  }

  async forAccount(accountId: string, range: StatsRange): Promise<StatsBucket[]> {
    const instances = await this.docs.collection(INSTANCES).find({ account_id: accountId });
    return this.sum(
      instances.map((i) => i._id),
      range,
    );
  }

  private async sum(instanceIds: string[], range: StatsRange): Promise<StatsBucket[]> {
    const first = bucketStart(range.fromMs, range.size);
    const sums = new Map<number, Sum>();
    for (let start = first; start < range.toMs; start += BUCKET_MS[range.size]) sums.set(start, empty());
    if (instanceIds.length > 0) {
      const from = new Date(first).toISOString();
      const to = new Date(range.toMs).toISOString();
      const docs = await this.docs
        .collection<StatsBucketDoc>(STATS)
        .find({ instance_id: instanceIds.length === 1 ? instanceIds[0] : { $in: instanceIds }, size: range.size, start: { $gte: from, $lt: to } });
      for (const doc of docs) {
        const sum = sums.get(Date.parse(doc.start));
        if (sum) add(sum, doc);
      }
      // A connection still open counts up to now: its seconds are written only when it closes.
      const open = await this.docs.collection<StatsSessionDoc>(STATS_SESSIONS).find({ _id: { $in: instanceIds }, closed_at: null });
      for (const session of open) {
        for (const { start, seconds } of splitSeconds(Math.max(session.since, first), Math.min(range.nowMs, range.toMs), range.size)) {
          const sum = sums.get(start);
          if (sum) sum.connected_seconds += seconds;
        }
      }
    }
    return [...sums].map(([start, sum]) => present(start, sum));
  }
}

function empty(): Sum {
  return { messages_in: 0, messages_out: 0, media_in: 0, media_out: 0, deliveries_ok: 0, deliveries_failed: 0, connected_seconds: 0, latency: new Array<number>(LATENCY_BUCKETS).fill(0) };
}

function add(sum: Sum, doc: StatsBucketDoc): void {
  for (const counter of COUNTERS) sum[counter] += doc[counter] ?? 0;
  for (const [i, n] of Object.entries(doc.latency ?? {})) sum.latency[Number(i)] = (sum.latency[Number(i)] ?? 0) + n;
}

function present(start: number, sum: Sum): StatsBucket {
  return {
    start: new Date(start).toISOString(),
    messages_in: sum.messages_in,
    messages_out: sum.messages_out,
    media_in: sum.media_in,
    media_out: sum.media_out,
    deliveries_ok: sum.deliveries_ok,
    deliveries_failed: sum.deliveries_failed,
    delivery_p95_ms: p95(sum.latency),
    connected_seconds: Math.round(sum.connected_seconds),
  };
}
