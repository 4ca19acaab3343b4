/** Shared output for `npm run bench`: one line per measurement, ratios against a same-run baseline. */
export interface Measurement {
  name: string;
  value: number;
  unit: string;
  /** Baseline measured in the same run, same unit. */
  baseline?: { name: string; value: number };
  /** Human-readable target, e.g. ">= 20000/s" or ">= 0.5x". */
  target?: string;
  /** Whether the target is met; undefined when there is no target. */
  met?: boolean;
}

export function report(m: Measurement): void {
  const parts = [`${m.name}: ${fmt(m.value)} ${m.unit}`];
  if (m.baseline) {
    parts.push(`baseline ${m.baseline.name}: ${fmt(m.baseline.value)} ${m.unit}`);
    parts.push(`ratio ${(m.value / m.baseline.value).toFixed(2)}x`);
  }
  if (m.target) parts.push(`target ${m.target} ${m.met === undefined ? '' : m.met ? 'MET' : 'MISSED'}`.trim());
  console.log(parts.join(' | '));
}

function fmt(n: number): string {
  return n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(2);
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] as number;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}
