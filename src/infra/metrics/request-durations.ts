import type { Metric } from 'prom-client';

type Labels = { method: string; route: string; status: string };

interface Series {
  labels: Labels;
  /** Observations per bucket, not cumulative: index i counts values in (bounds[i-1], bounds[i]]. */
  counts: number[];
  sum: number;
  count: number;
}

/** A sample as prom-client's registry formats it: `le` first, then the series' labels. */
interface Sample {
  value: number;
  metricName: string;
  labels: Record<string, string | number>;
  sharedLabels?: Labels;
  /** Always empty (no exemplars); present as prom-client's samples have it, null on buckets. */
  exemplar: null | undefined;
}

/**
 * A histogram of request durations by method, route template and status, in the exposition
 * prom-client's Histogram gives (same names, buckets, `le` and +Inf, `_sum` and `_count`),
 * registered in its registry. Counted here because prom-client's `observe` builds, validates and
 * hashes a labels object on every call: a few µs of every request. Here a request is one map
 * lookup by a string and three additions; the labels are formatted only when Prometheus scrapes.
 * Series stay bounded: the route is a template (or 'unmatched'), methods are the few Node parses.
 */
export class RequestDurations {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  /**
   * By route, then status, then method: the route and method are strings V8 has already hashed
   * (templates, and the method names Node's parser hands out), where a key joining the three
   * would be a new string to build and hash on every request.
   */
  private readonly series = new Map<string, Map<number, Map<string, Series>>>();
  /** The same series in the order they were first seen, as prom-client lists them. */
  private readonly seen: Series[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
  ) {}

  /** Registered as a prom-client metric: its registry reads `get`, `getForPromString` and `reset`. */
  asMetric(): Metric {
    return this as unknown as Metric;
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    let byStatus = this.series.get(route);
    if (byStatus === undefined) this.series.set(route, (byStatus = new Map()));
    let byMethod = byStatus.get(status);
    if (byMethod === undefined) byStatus.set(status, (byMethod = new Map()));
    let series = byMethod.get(method);
    if (series === undefined) {
      series = { labels: { method, route, status: String(status) }, counts: this.bounds.map(() => 0), sum: 0, count: 0 };
      byMethod.set(method, series);
      this.seen.push(series);
    }
    // As prom-client: the first bound at or above the value; past the last, only +Inf counts it.
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && seconds > (bounds[i] as number)) i++;
    if (i < bounds.length) series.counts[i] = (series.counts[i] as number) + 1;
    series.sum += seconds;
    series.count += 1;
  }

  reset(): void {
    this.series.clear();
    this.seen.length = 0;
  }

  /** What the registry formats as text: each series' labels shared by its samples. */
  getForPromString(): Promise<{ name: string; help: string; type: string; aggregator: string; values: Sample[] }> {
    const values: Sample[] = [];
    const bucket = `${this.name}_bucket`;
    for (const { labels, counts, sum, count } of this.seen) {
      let cumulative = 0;
      for (const [i, le] of this.bounds.entries()) {
        cumulative += counts[i] as number;
        values.push({ value: cumulative, metricName: bucket, labels: { le }, sharedLabels: labels, exemplar: null });
      }
      values.push(
        { value: count, metricName: bucket, labels: { le: '+Inf' }, sharedLabels: labels, exemplar: null },
        { value: sum, metricName: `${this.name}_sum`, labels: {}, sharedLabels: labels, exemplar: undefined },
        { value: count, metricName: `${this.name}_count`, labels: {}, sharedLabels: labels, exemplar: undefined },
      );
    }
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values });
  }

  /** As JSON (prom-client's getMetricsAsJSON): the labels of each sample in one object. */
  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: Sample[] }> {
    const data = await this.getForPromString();
    return { ...data, values: data.values.map(({ sharedLabels, ...sample }) => ({ ...sample, labels: { ...sample.labels, ...sharedLabels } })) };
  }
}
