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
  const cpuRatios = contenders.map(() => [] as number[]);
  const check = (who: string, result: LoadResult) => {
    if (result.errors > 0) throw new Error(`${who}: ${result.errors} errors during load`);
    return result;
  };
  for (let i = 0; i < rounds; i++) {
    // Every other round runs the contenders first, so a drift in the machine's load does not
    // always fall on the same side of the ratio.
    const baseFirst = i % 2 === 0;
    const base = baseFirst ? check(baseline.name, await baseline.run(window)) : undefined;
    const results: LoadResult[] = [];
    for (const contender of contenders) results.push(check(contender.name, await contender.run(window)));
    const b = base ?? check(baseline.name, await baseline.run(window));
    baseRates.push(b.perSecond);
    const line = [`${label} round ${i + 1}/${rounds}: ${baseline.name} ${rate(b)}`];
    for (const [k, result] of results.entries()) {
      rates[k]?.push(result.perSecond);
      ratios[k]?.push(result.perSecond / b.perSecond);
      p99[k]?.push(result.p99ms);
      if (result.cpuUsPerRequest !== undefined && b.cpuUsPerRequest !== undefined) cpuRatios[k]?.push(b.cpuUsPerRequest / result.cpuUsPerRequest);
      line.push(`${contenders[k]?.name} ${rate(result)} (${(result.perSecond / b.perSecond).toFixed(2)}x)`);
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
    const cpu = cpuRatios[k] ?? [];
    if (cpu.length > 0) {
      // Throughput on a loaded machine follows the share of CPU each process gets; the CPU each
      // spends per request does not, so this ratio says what the code costs.
      report({
        name: `${label} ${contender.name}, server CPU per request against the baseline's (baseline / contender)`,
        value: median(cpu),
        unit: `x median; per round ${cpu.map((r) => r.toFixed(2)).join(' ')}`,
      });
    }
  }
}

const rate = (r: LoadResult) =>
  `${Math.round(r.perSecond).toLocaleString('en-US')} req/s p99 ${r.p99ms.toFixed(1)} ms${r.cpuUsPerRequest === undefined ? '' : ` ${r.cpuUsPerRequest.toFixed(1)} µs CPU/req`}`;
