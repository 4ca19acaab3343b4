import { median, report } from './lib.js';
import type { LoadResult } from './load.js';

export interface Contender {
  name: string;
  /** One load window of the given length. */
  run(ms: number): Promise<LoadResult>;
}

/**
 * Throughput against a baseline in interleaved short rounds, the ratio taken within each round and
 * the median ratio reported. On a shared machine the load of other processes drifts over seconds;
 * back-to-back runs of several seconds each would compare different moments, not different code.
 */
export async function compareInterleaved(options: {
  label: string;
  baseline: Contender;
  contenders: Contender[];
  durationMs: number;
  rounds: number;
  target: number;
}): Promise<void> {
  const { baseline, contenders, rounds } = options;
  const window = options.durationMs / rounds;
  const baseRates: number[] = [];
  const rates = contenders.map(() => [] as number[]);
  const ratios = contenders.map(() => [] as number[]);
  const p99 = contenders.map(() => [] as number[]);
  for (let i = 0; i < rounds; i++) {
    const base = await baseline.run(window);
    if (base.errors > 0) throw new Error(`${baseline.name}: ${base.errors} errors during load`);
    baseRates.push(base.perSecond);
    for (const [k, contender] of contenders.entries()) {
      const result = await contender.run(window);
      if (result.errors > 0) throw new Error(`${contender.name}: ${result.errors} errors during load`);
      rates[k]?.push(result.perSecond);
      ratios[k]?.push(result.perSecond / base.perSecond);
      p99[k]?.push(result.p99ms);
    }
  }
  const baseRate = median(baseRates);
  report({ name: `${options.label} ${baseline.name} (baseline, median of ${rounds} rounds)`, value: baseRate, unit: 'req/s' });
  for (const [k, contender] of contenders.entries()) {
    const ratio = median(ratios[k] ?? []);
    report({
      name: `${options.label} ${contender.name}, median of ${rounds} interleaved rounds`,
      // The baseline times the median in-round ratio, so the printed ratio is that median.
      value: ratio * baseRate,
      unit: 'req/s',
      baseline: { name: baseline.name, value: baseRate },
      target: `>= ${options.target}x`,
      met: ratio >= options.target,
    });
    report({
      name: `${options.label} ${contender.name} per round`,
      value: median(rates[k] ?? []),
      unit: `req/s median; ratios ${(ratios[k] ?? []).map((r) => r.toFixed(2)).join(' ')}; p99 median ${median(p99[k] ?? []).toFixed(2)} ms`,
    });
  }
}
