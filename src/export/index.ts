import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { Leases } from '../cluster/leases.js';
import type { Placement } from '../cluster/placement.js';
import type { Clock } from '../infra/clock.js';
import type { Config } from '../infra/config/config.js';
import type { SecretBox } from '../infra/crypto/secret-box.js';
import type { DocumentStore } from '../infra/docstore/port.js';
import type { Logger } from '../infra/logging/logger.js';
import type { Projection } from '../projections/projection.js';
import { everyLane, LaneLeases } from '../webhooks/dispatch/lane-claims.js';
import { OutcomeWriter } from '../webhooks/dispatch/outcome-writer.js';
import type { SinkKind } from './documents.js';
import { ExportKeys } from './export-keys.js';
import { ExportLanes, type ExportMeter } from './export-lanes.js';
import { ExportReactor } from './export-reactor.js';
import { ExportRepo } from './export-repo.js';
import { ExportQueries } from './export-status.js';
import { AmqpSink } from './sinks/amqp-sink.js';
import { NatsSink } from './sinks/nats-sink.js';
import type { Sink } from './sinks/port.js';

export { checkExportConfig } from './check-config.js';

export interface ExportDeps {
  docs: DocumentStore;
  clock: Clock;
  logger: Logger;
  config: Config;
  box: SecretBox;
  /** Where the export's metrics are registered (the gateway's /metrics). */
  registry?: Registry;
  /** Several nodes share the stores: each instance's lanes are claimed by one node, by lease (as webhook lanes). */
  cluster?: { leases: Leases; ttlMs: number; clock: Clock; placement?: Placement };
}

/** Knobs with production defaults; tests and the bench turn them. */
export interface ExportTuning {
  /** Messages one lane publishes at once; a crash can make AMQP publish up to two batches again, per instance. */
  batch?: number;
}

export interface EventExport {
  projections: Projection[];
  /** The projection the export's settings and outbox are read from (what its commands wait for). */
  readModel: string;
  /** A broker is configured: the routes may turn the export on. */
  enabled: boolean;
  queries: ExportQueries;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export const DEFAULT_EXPORT_BATCH = 256;

/** Event export to RabbitMQ and/or NATS JetStream (CONTRACT.md, Event export to message brokers). */
export function createExport(deps: ExportDeps, tuning: ExportTuning = {}): EventExport {
  const { config, docs, clock } = deps;
  const logger = deps.logger.child({ module: 'export' });
  const sinks: Sink[] = [];
  if (config.EXPORT_AMQP_URL !== undefined) {
    sinks.push(new AmqpSink({ url: config.EXPORT_AMQP_URL, exchange: config.EXPORT_AMQP_EXCHANGE, retryMaxMs: config.EXPORT_RETRY_MAX_MS, logger: logger.child({ sink: 'amqp' }) }));
  }
  if (config.EXPORT_NATS_URL !== undefined) {
    sinks.push(
      new NatsSink({
        url: config.EXPORT_NATS_URL,
        subjectPrefix: config.EXPORT_NATS_SUBJECT_PREFIX,
        stream: config.EXPORT_NATS_STREAM,
        retryMaxMs: config.EXPORT_RETRY_MAX_MS,
        logger: logger.child({ sink: 'nats' }),
      }),
    );
  }
  const repo = new ExportRepo(docs);
  const keys = new ExportKeys(docs, deps.box);
  const stopAll = new AbortController();
  const cluster = deps.cluster;
  // Declared before the leases that call into it once started.
  let lanes: ExportLanes | null = null;
  const laneLeases = cluster
    ? new LaneLeases({
        kind: 'export',
        leases: cluster.leases,
        instances: () => repo.exportingInstances(),
        clock: cluster.clock,
        logger,
        ttlMs: cluster.ttlMs,
        ...(cluster.placement ? { placement: cluster.placement } : {}),
        stop: stopAll.signal,
        gained: (id) => lanes?.gained(id),
        lost: (id) => lanes?.lost(id),
      })
    : null;
  const meter = exportMeter(deps.registry, sinks.map((s) => s.kind), () => lanes?.lag() ?? {});
  lanes = new ExportLanes({
    repo,
    writer: new OutcomeWriter(docs, logger),
    sinks,
    keys,
    clock,
    logger,
    ownership: laneLeases ?? everyLane(stopAll.signal),
    meter,
    batch: tuning.batch ?? DEFAULT_EXPORT_BATCH,
    retryMaxMs: config.EXPORT_RETRY_MAX_MS,
    shared: cluster !== undefined,
  });
  const running = lanes;
  const reactor = new ExportReactor(logger, sinks.length > 0, ({ recorded, changed }) => {
    // Keys first: an entry committed after a rotation must not be signed with the old secret.
    keys.forget(changed);
    running.recorded(recorded);
  });
  let stopped: Promise<void> | undefined;
  return {
    projections: [reactor],
    readModel: reactor.name,
    enabled: sinks.length > 0,
    queries: new ExportQueries(repo, sinks),
    start: async () => {
      if (sinks.length === 0) return;
      for (const sink of sinks) sink.start();
      await laneLeases?.start();
      await running.start();
    },
    stop: () =>
      (stopped ??= (async () => {
        await running.stop();
        stopAll.abort();
        await laneLeases?.stop();
        await Promise.all(sinks.map((s) => s.stop()));
      })()),
  };
}

/** published, failed, skipped, lag and the publish latency on the gateway's registry (a registry of its own when none is given). */
function exportMeter(registry: Registry | undefined, kinds: readonly SinkKind[], lag: () => Partial<Record<SinkKind, number>>): ExportMeter {
  const registers = registry ? [registry] : [];
  const published = new Counter({ name: 'gateway_export_published_total', help: 'Events published to a broker and confirmed by it, by sink', labelNames: ['sink'], registers });
  const failed = new Counter({ name: 'gateway_export_failed_total', help: 'Export publishes that failed (retried, or passed over when refused for good), by sink', labelNames: ['sink'], registers });
  const skipped = new Counter({ name: 'gateway_export_skipped_total', help: 'Events a broker refused for good (too large) and the export passed over, by sink', labelNames: ['sink'], registers });
  const latency = new Histogram({
    name: 'gateway_export_latency_seconds',
    help: 'From the event to the broker confirming its message, by sink',
    labelNames: ['sink'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60],
    registers,
  });
  new Gauge({
    name: 'gateway_export_lag_events',
    help: 'Events recorded for export and not yet published, by sink (over the lanes this node holds)',
    labelNames: ['sink'],
    registers,
    collect() {
      this.reset();
      for (const [sink, n] of Object.entries(lag())) this.set({ sink }, n);
    },
  });
  // Every configured sink shows from the first scrape, at 0 until something happens.
  for (const sink of kinds) {
    published.inc({ sink }, 0);
    failed.inc({ sink }, 0);
    skipped.inc({ sink }, 0);
  }
  return {
    published(sink, count, eventTimesMs) {
      published.inc({ sink }, count);
      const now = Date.now();
      for (const at of eventTimesMs) latency.observe({ sink }, Math.max(0, now - at) / 1000);
    },
    failed(sink, count) {
      failed.inc({ sink }, count);
    },
    skipped(sink, count) {
      skipped.inc({ sink }, count);
    },
  };
}
