/**
 * Delivery latencies as a bounded histogram: bucket i counts latencies up to 2^i ms, the last
 * bucket everything longer (about 2.3 hours and up). Histograms add, so hours sum into days and
 * instances into an account exactly; a percentile is read as its bucket's upper bound, an
 * overestimate by less than a factor of two.
 */
export const LATENCY_BUCKETS = 24;

export function latencyBucket(ms: number): number {
  if (ms <= 1) return 0;
  return Math.min(LATENCY_BUCKETS - 1, Math.ceil(Math.log2(ms)));
}

const bucketUpperMs = (i: number): number => 2 ** i;

/** The 95th percentile's bucket bound; null without deliveries. */
export function p95(histogram: readonly number[]): number | null {
  const total = histogram.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  const rank = Math.ceil(total * 0.95);
  let seen = 0;
  for (let i = 0; i < histogram.length; i++) {
    seen += histogram[i] ?? 0;
    if (seen >= rank) return bucketUpperMs(i);
  }
  return bucketUpperMs(histogram.length - 1);
}
