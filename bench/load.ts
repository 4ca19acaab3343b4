import { Pool } from 'undici';
import { percentile } from './lib.js';

export interface LoadResult {
  requests: number;
  perSecond: number;
  p50ms: number;
  p99ms: number;
  errors: number;
}

/** A bounded closed-loop load: `connections` workers, each one request at a time, for `durationMs`. */
export async function load(origin: string, path: string, headers: Record<string, string>, durationMs: number, connections = 50): Promise<LoadResult> {
  const pool = new Pool(origin, { connections, pipelining: 1 });
  const latencies: number[] = [];
  let errors = 0;
  const end = performance.now() + durationMs;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        const res = await pool.request({ method: 'GET', path, headers });
        await res.body.text();
        if (res.statusCode !== 200) errors++;
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  await pool.close();
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    perSecond: latencies.length / elapsed,
    p50ms: percentile(latencies, 50),
    p99ms: percentile(latencies, 99),
    errors,
  };
}
