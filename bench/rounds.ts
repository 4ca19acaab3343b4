import { median, report } from './lib.js';
import type { LoadResult } from './load.js';

export interface Contender {
  name: string;
  /** One load window of the given length. */
  run(ms: number): Promise<LoadResult>;
}

/**
 * Throughput against a baseline in interleaved rounds (baseline, then each contender, round after
 * round), the ratio taken within each round and the median ratio reported with its spread. On a
 * shared machine the load of other processes drifts over seconds; back-to-back runs of several
 * seconds each would compare different moments, not different code.
 */
export async function compareInterleaved(options: {
  label: string;
  baseline: Contender;
  contenders: Contender[];
  /** Per contender, split evenly over the rounds. */
  durationMs: number;
  rounds: number;
  target: number;
}): Promise<void> {
  const { baseline, contenders, rounds, label } = options;
  const window = options.durationMs / rounds;
  const baseRates: number[] = [];
  const rates = contenders.map(() => [] as number[]);
  const ratios = contenders.map(() => [] as number[]);
  const p99 = contenders.map(() => [] as number[]);
  for (let i = 0; i < rounds; i++) {
    const base = await baseline.run(window);
    if (base.errors > 0) throw new Error(`${baseline.name}: ${base.errors} errors during load`);
    baseRates.push(base.perSecond);
    const line = [`${label} round ${i + 1}/${rounds}: ${baseline.name} ${rate(base)}`];
    for (const [k, contender] of contenders.entries()) {
      const result = await contender.run(window);
      if (result.errors > 0) throw new Error(`${contender.name}: ${result.errors} errors during load`);
      rates[k]?.push(result.perSecond);
      ratios[k]?.push(result.perSecond / base.perSecond);
      p99[k]?.push(result.p99ms);
      line.push(`${contender.name} ${rate(result)} (${(result.perSecond / base.perSecond).toFixed(2)}x)`);
    }
    console.log(line.join(' | '));
  }
  const baseRate = median(baseRates);
  report({ name: `${label} ${baseline.name} (baseline, median of ${rounds} rounds)`, value: baseRate, unit: 'req/s' });
  for (const [k, contender] of contenders.entries()) {
    const inRound = ratios[k] ?? [];
    const ratio = median(inRound);
    report({
      name: `${label} ${contender.name}, median of ${rounds} interleaved rounds`,
      // The baseline times the median in-round ratio, so the printed ratio is that median.
      value: ratio * baseRate,
      unit: 'req/s',
      baseline: { name: baseline.name, value: baseRate },
      target: `>= ${options.target}x`,
      met: ratio >= options.target,
    });
    report({
      name: `${label} ${contender.name} per round`,
      value: median(rates[k] ?? []),
      unit: `req/s median; ratios ${inRound.map((r) => r.toFixed(2)).join(' ')} (spread ${(Math.max(...inRound) - Math.min(...inRound)).toFixed(2)}); p99 median ${median(p99[k] ?? []).toFixed(2)} ms`,
    });
  }
}

const rate = (r: LoadResult) => `${Math.round(r.perSecond).toLocaleString('en-US')} req/s p99 ${r.p99ms.toFixed(1)} ms`;
