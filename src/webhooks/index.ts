import type { Leases } from '../cluster/leases.js';
import type { Placement } from '../cluster/placement.js';
import type { Clock } from '../infra/clock.js';
import type { DocClaims } from '../infra/doc-claims.js';
import type { Config } from '../infra/config/config.js';
import type { SecretBox } from '../infra/crypto/secret-box.js';
import type { DocumentStore } from '../infra/docstore/port.js';
import type { Logger } from '../infra/logging/logger.js';
import type { WorkMeter } from '../infra/metrics/work-meter.js';
import type { Projection } from '../projections/projection.js';
import { WebhookReactor } from './webhook-reactor.js';
import { DeliveryRepo } from './deliveries/delivery-repo.js';
import type { DeliveryDoc } from './deliveries/documents.js';
import { RetentionSweeper } from './deliveries/retention.js';
import { DeliveryLog } from './deliveries/delivery-log.js';
import { Dispatcher } from './dispatch/dispatcher.js';
import { Sender } from './dispatch/sender.js';
import { SigningKeys } from './dispatch/signing-keys.js';
import { WorkerPost } from './dispatch/post/worker-post.js';

export interface WebhookDeps {
  docs: DocumentStore;
  clock: Clock;
  logger: Logger;
  config: Config;
  box: SecretBox;
  /** Where the dispatcher's CPU is counted (/metrics). */
  work?: WorkMeter;
  /** Told of each delivery once its new state is saved. */
  onSettled?: (delivery: DeliveryDoc) => void;
  /** Several nodes share the stores (both backends remote): work is claimed, with claims lasting `ttlMs` unrenewed (on `clock`: real time). */
  cluster?: { leases: Leases; claims: DocClaims; ttlMs: number; clock: Clock; placement?: Placement };
}

/** Knobs with production defaults; tests and the bench turn them. */
export interface WebhookTuning {
  /** Attempts in flight per receiver origin (and keep-alive connections to it); default WEBHOOK_CONCURRENCY_PER_HOST. */
  perHost?: number;
  /** Attempts in flight in all. */
  global?: number;
  laneHeld?: number;
  hostRetriesHeld?: number;
  /** Per attempt; CONTRACT.md says 10 s. */
  timeoutMs?: number;
  /** The jitter source, in [0, 1). */
  random?: () => number;
  /** Between retention sweeps of the delivery log. */
  retentionIntervalMs?: number;
  /** Deliveries read or removed per store call during a retention sweep. */
  retentionBatch?: number;
}

export interface Webhooks {
  projections: Projection[];
  /** The delivery log and its manual retry, which the API's delivery routes serve. */
  log: DeliveryLog;
  /** Starts the dispatcher and the retention sweeps; call after the projections started. */
  start(): Promise<void>;
  /** Stops the retention sweeps and the dispatcher: in-flight attempts finish or stay pending; nothing is lost. */
  stop(): Promise<void>;
  /** For tests: wake the retry queues after moving a fake clock; count work not yet settled. */
  dispatcher: Pick<Dispatcher, 'poke' | 'busy' | 'lanesHeld'>;
  /** For tests: sweep expired deliveries now, after moving a fake clock. */
  retention: Pick<RetentionSweeper, 'sweep'>;
}

export function createWebhooks(deps: WebhookDeps, tuning: WebhookTuning = {}): Webhooks {
  const { config, docs, clock } = deps;
  const logger = deps.logger.child({ module: 'webhooks' });
  const timeoutMs = tuning.timeoutMs ?? 10_000;
  const perHost = tuning.perHost ?? config.WEBHOOK_CONCURRENCY_PER_HOST;
  const horizonMs = config.WEBHOOK_RETRY_HORIZON_S * 1000;
  const post = new WorkerPost({ allowPrivate: config.ALLOW_PRIVATE_TARGETS, perHost, timeoutMs }, (reason) =>
    logger.error({ reason }, 'the webhook sender thread stopped; its attempts in flight will be retried'),
  );
  const repo = new DeliveryRepo(docs);
  const keys = new SigningKeys(repo, deps.box);
  const dispatcher = new Dispatcher({
    docs,
    repo,
    clock,
    logger,
    keys,
    sender: new Sender({
      post,
      clock,
      allowPrivate: config.ALLOW_PRIVATE_TARGETS,
      random: tuning.random ?? Math.random,
      timing: {
        baseMs: config.WEBHOOK_RETRY_BASE_MS,
        maxMs: config.WEBHOOK_RETRY_MAX_MS,
        horizonMs,
      },
    }),
    limits: {
      perInstance: config.WEBHOOK_ORDERED ? 1 : config.WEBHOOK_CONCURRENCY_PER_INSTANCE,
      perHost,
      global: tuning.global ?? 512,
      laneHeld: tuning.laneHeld ?? 256,
      hostRetriesHeld: tuning.hostRetriesHeld ?? 256,
    },
    horizonMs,
    stopGraceMs: Math.min(config.SHUTDOWN_TIMEOUT_MS, timeoutMs),
    ...(deps.onSettled ? { onSettled: deps.onSettled } : {}),
    ...(deps.work ? { work: deps.work } : {}),
    ...(deps.cluster ? { cluster: deps.cluster } : {}),
  });
  const reactor = new WebhookReactor(logger, ({ queued, changed }) => {
    // Keys first: a delivery committed after a rotation must not be signed with the old secret.
    keys.forget(changed);
    if (queued.length > 0) dispatcher.queued(queued);
  });
  const log = new DeliveryLog(repo, (delivery) => dispatcher.retryByHand(delivery));
  // Retention is counted in days: a few minutes late is nothing, and idle sweeps stay rare.
  const retentionIntervalMs = tuning.retentionIntervalMs ?? 5 * 60_000;
  const cluster = deps.cluster;
  const retention = new RetentionSweeper({
    repo,
    clock,
    logger,
    retentionDays: config.SESSION_RETENTION_DAYS,
    intervalMs: retentionIntervalMs,
    batch: tuning.retentionBatch ?? 200,
    // Several nodes: one sweeps, holding a lease across its sweeps; another takes over if it dies.
    ...(cluster ? { leader: async () => (await cluster.leases.acquire('webhook-retention', Math.max(cluster.ttlMs, 2 * retentionIntervalMs))) !== null } : {}),
  });
  let stopped: Promise<void> | undefined;
  return {
    projections: [reactor],
    log,
    start: async () => {
      await dispatcher.start();
      retention.start();
    },
    stop: () =>
      (stopped ??= (async () => {
        await retention.stop();
        await dispatcher.stop();
        await post.close();
      })()),
    dispatcher,
    retention,
  };
}
