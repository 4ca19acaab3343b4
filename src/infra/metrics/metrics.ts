import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { RequestDurations } from './request-durations.js';
import { WorkMeter, type LaneWork } from './work-meter.js';

/** Read when Prometheus scrapes: values that are cheaper to look at than to keep up to date. */
export interface ScrapeSources {
  sessions?: () => Record<string, number>;
  projectionLag?: () => Promise<Record<string, number>>;
  queues?: () => Promise<Record<string, number>>;
  realtimeStreams?: () => number;
  /** Many nodes: the live nodes and what each holds (their membership documents). */
  cluster?: () => Promise<ClusterView>;
}

/** GET /cluster: the live nodes, and the sessions and lanes each held at its last renewal. */
export interface ClusterView {
  nodes: { node_id: string; node_url: string | null; since: string; sessions: number; lanes: number }[];
}

/**
 * The gateway's Prometheus metrics, on a registry of its own (prom-client). Counters and
 * histograms are fed where things happen; gauges are read at scrape time from `sources`.
 */
export class Metrics {
  readonly registry = new Registry();
  /** CPU per stage of the event path, fed where the work happens and read at scrape time. */
  readonly work = new WorkMeter();
  private sources: ScrapeSources = {};
  /** Every HTTP request is timed here: a histogram of our own, cheaper per request than prom-client's. */
  readonly requests: RequestDurations;
  readonly appends: Histogram<'outcome'>;
  readonly appendedEvents: Counter;
  readonly webhookAttempts: Histogram<'outcome'>;
  readonly webhookOutcomes: Counter<'outcome'>;

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'gateway_process_' });
    this.requests = new RequestDurations('gateway_http_request_duration_seconds', 'HTTP requests by method, route template and status', [
      0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10,
    ]);
    this.registry.registerMetric(this.requests.asMetric());
    this.appends = new Histogram({
      name: 'gateway_eventstore_append_duration_seconds',
      help: 'Appends to the event store, until durable',
      labelNames: ['outcome'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers: [this.registry],
    });
    this.appendedEvents = new Counter({ name: 'gateway_eventstore_appended_events_total', help: 'Events appended', registers: [this.registry] });
    this.webhookOutcomes = new Counter({
      name: 'gateway_webhook_attempts_total',
      help: 'Webhook attempts by the state they left the delivery in (delivered, retrying, failed)',
      labelNames: ['outcome'],
      registers: [this.registry],
    });
    this.webhookAttempts = new Histogram({
      name: 'gateway_webhook_delivery_latency_seconds',
      help: 'From the event to its delivery, for delivered webhooks',
      labelNames: ['outcome'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [this.registry],
    });
    const self = this;
    new Gauge({
      name: 'gateway_sessions',
      help: 'Sessions held by this process, by state',
      labelNames: ['state'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [state, n] of Object.entries(self.sources.sessions?.() ?? {})) this.set({ state }, n);
      },
    });
    new Gauge({
      name: 'gateway_projection_lag_positions',
      help: 'How far each projection is behind the head of the log (log positions)',
      labelNames: ['projection'],
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const [projection, lag] of Object.entries((await self.sources.projectionLag?.()) ?? {})) this.set({ projection }, lag);
      },
    });
    new Gauge({
      name: 'gateway_queue_depth',
      help: 'Work waiting, by queue',
      labelNames: ['queue'],
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const [queue, n] of Object.entries((await self.sources.queues?.()) ?? {})) this.set({ queue }, n);
      },
    });
    new Gauge({
      name: 'gateway_cluster_held',
      help: 'Many nodes: sessions and webhook lanes each live node holds (as GET /cluster)',
      labelNames: ['node', 'kind'],
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const n of (await self.cluster()).nodes) {
          this.set({ node: n.node_id, kind: 'sessions' }, n.sessions);
          this.set({ node: n.node_id, kind: 'lanes' }, n.lanes);
        }
      },
    });
    this.registerWork();
    new Gauge({
      name: 'gateway_realtime_streams',
      help: 'Open realtime streams',
      registers: [this.registry],
      collect() {
        this.set(self.sources.realtimeStreams?.() ?? 0);
      },
    });
  }

  /** Counters over `work`: set from its plain numbers when scraped, so feeding them costs no label lookup. */
  private registerWork(): void {
    const work = this.work;
    const perLane = (name: string, help: string, labelNames: string[], values: (lane: LaneWork) => [Record<string, string>, number][]) =>
      new Counter({
        name,
        help,
        labelNames: ['projection', ...labelNames],
        registers: [this.registry],
        collect() {
          this.reset();
          for (const [projection, lane] of work.lanes()) for (const [labels, value] of values(lane)) this.inc({ projection, ...labels }, value);
        },
      });
    perLane('gateway_projection_busy_seconds_total', 'CPU seconds of synchronous work per projection: fold (events into writes), write (the work of the document store), advance (positions, waiters, commit hook)', ['phase'], (l) => [
      [{ phase: 'fold' }, l.foldMs / 1000],
      [{ phase: 'write' }, l.writeMs / 1000],
      [{ phase: 'advance' }, l.advanceMs / 1000],
    ]);
    perLane('gateway_projection_batches_total', 'Batches of events handed to each projection; ignored: none of its event types', ['outcome'], (l) => [
      [{ outcome: 'folded' }, l.batches - l.ignoredBatches],
      [{ outcome: 'ignored' }, l.ignoredBatches],
    ]);
    perLane('gateway_projection_events_total', 'Events handed to each projection; ignored: not of its event types', ['outcome'], (l) => [
      [{ outcome: 'folded' }, l.events - l.ignoredEvents],
      [{ outcome: 'ignored' }, l.ignoredEvents],
    ]);
    perLane('gateway_projection_writes_total', 'Document store batches written per projection (read model and checkpoint), and the operations in them', ['unit'], (l) => [
      [{ unit: 'batches' }, l.writes],
      [{ unit: 'ops' }, l.ops],
    ]);
    new Counter({
      name: 'gateway_stage_busy_seconds_total',
      help: 'CPU seconds of synchronous work in stages of the event path outside the projections',
      labelNames: ['stage'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [stage, s] of work.stages()) this.inc({ stage }, s.ms / 1000);
      },
    });
    new Counter({
      name: 'gateway_event_loop_active_seconds_total',
      help: 'Wall seconds the main thread was busy (event loop utilization): beside its CPU seconds, how much of the busy_seconds above the thread spent waiting for a core',
      collect() {
        this.reset();
        this.inc(performance.eventLoopUtilization().active / 1000);
      },
      registers: [this.registry],
    });
    new Counter({
      name: 'gateway_stage_runs_total',
      help: 'Times each stage ran',
      labelNames: ['stage'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [stage, s] of work.stages()) this.inc({ stage }, s.count);
      },
    });
  }

  /** A webhook attempt's outcome was recorded. */
  webhookSettled(delivery: { state: string; created_at: string; delivered_at: string | null }): void {
    this.webhookOutcomes.inc({ outcome: delivery.state });
    if (delivery.state === 'delivered' && delivery.delivered_at) {
      const seconds = (Date.parse(delivery.delivered_at) - Date.parse(delivery.created_at)) / 1000;
      if (Number.isFinite(seconds) && seconds >= 0) this.webhookAttempts.observe({ outcome: 'delivered' }, seconds);
    }
  }

  /** Sources exist only once the parts they read are built. */
  observe(sources: ScrapeSources): void {
    this.sources = { ...this.sources, ...sources };
  }

  /** The live nodes (none listed on a single node, where nothing is placed). */
  async cluster(): Promise<ClusterView> {
    return (await this.sources.cluster?.()) ?? { nodes: [] };
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
