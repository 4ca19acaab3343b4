export type BucketSize = 'hour' | 'day';

export const BUCKET_MS: Record<BucketSize, number> = { hour: 3_600_000, day: 86_400_000 };

/** Buckets start on whole UTC hours and days. */
export const bucketStart = (ms: number, size: BucketSize): number => Math.floor(ms / BUCKET_MS[size]) * BUCKET_MS[size];

const isoStarts = new Map<number, string>();
/** Bucket starts as ISO text, remembered: every message names two buckets, and a log spans few. */
export function startIso(startMs: number): string {
  let iso = isoStarts.get(startMs);
  if (iso === undefined) {
    // Bounded: a server up for years forgets and starts over rather than grow without end.
    if (isoStarts.size >= 50_000) isoStarts.clear();
    isoStarts.set(startMs, (iso = new Date(startMs).toISOString()));
  }
  return iso;
}

export const bucketId = (instanceId: string, size: BucketSize, startMs: number) => `${instanceId}|${size}|${startIso(startMs)}`;

/** The seconds of [fromMs, toMs) that fall in each bucket it overlaps. */
export function splitSeconds(fromMs: number, toMs: number, size: BucketSize): Array<{ start: number; seconds: number }> {
  const out: Array<{ start: number; seconds: number }> = [];
  for (let start = bucketStart(fromMs, size); start < toMs; start += BUCKET_MS[size]) {
    const ms = Math.min(toMs, start + BUCKET_MS[size]) - Math.max(fromMs, start);
    if (ms > 0) out.push({ start, seconds: ms / 1000 });
  }
  return out;
}
