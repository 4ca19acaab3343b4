import { setMaxListeners } from 'node:events';
import type { Clock } from '../../infra/clock.js';
import type { DocumentStore, WriteOp } from '../../infra/docstore/port.js';
import type { Logger } from '../../infra/logging/logger.js';
import { registerRetryHost, type DeliveryRepo } from '../deliveries/delivery-repo.js';
import type { DeliveryDoc } from '../deliveries/documents.js';
import { expiredOp, outcomeOp, type Outcome } from '../deliveries/outcomes.js';
import { Known } from './known.js';
import { LaneLoader } from './lane-loader.js';
import { OutcomeWriter } from './outcome-writer.js';
import { RetryLoader } from './retry-loader.js';
import { Scheduler, type SchedulerLimits, type Work } from './scheduler.js';
import type { Sender } from './sender.js';
import type { SigningKeys } from './signing-keys.js';

export interface DispatcherOptions {
  docs: DocumentStore;
  repo: DeliveryRepo;
  sender: Sender;
  keys: SigningKeys;
  clock: Clock;
  logger: Logger;
  limits: SchedulerLimits;
  horizonMs: number;
  /** How long stop() lets in-flight attempts finish before abandoning them (they stay pending). */
  stopGraceMs: number;
}

/**
 * Sends what the reactor recorded. The delivery log is the only durable state: this process
 * holds a bounded window of it in memory (lanes of first attempts, per-host retry queues),
 * attempts each delivery as the scheduler allows, and writes every outcome back. Anything it
 * held when it stopped or crashed is still queued or retrying in the log and is sent after the
 * restart: at least once, never lost.
 */
export class Dispatcher {
  private readonly scheduler: Scheduler;
  private readonly known = new Known();
  private readonly writer: OutcomeWriter;
  private readonly lanes: LaneLoader;
  private readonly retries: RetryLoader;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly abort = new AbortController();
  private started = false;
  private stopping = false;

  constructor(private readonly options: DispatcherOptions) {
    this.scheduler = new Scheduler(options.limits);
    this.writer = new OutcomeWriter(options.docs, options.logger);
    const pump = () => this.pump();
    this.lanes = new LaneLoader(options.repo, this.scheduler, this.known, options.logger, pump);
    this.retries = new RetryLoader(options.repo, this.scheduler, this.known, options.clock, options.logger, pump);
    // Every in-flight request listens on the one stop signal.
    setMaxListeners(0, this.abort.signal);
  }

  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    await this.lanes.start();
    await this.retries.start();
  }

  /** Stops taking work; lets attempts in flight finish (up to the grace), then records their outcomes. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.lanes.stop();
    this.retries.stop();
    if (this.inFlight.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.options.stopGraceMs)));
      await Promise.race([Promise.all(this.inFlight), grace]);
      clearTimeout(timer);
      this.abort.abort();
      await Promise.all(this.inFlight);
    }
    await this.writer.drain();
  }

  /** The reactor recorded a delivery at `pos` (committed with its checkpoint shortly). */
  queued(instanceId: string, pos: number): void {
    this.lanes.announced(instanceId, pos);
  }

  /** A delivery was made due by hand. */
  retryRequested(delivery: Pick<DeliveryDoc, 'host' | 'due_ms'>): void {
    this.retries.dueAt(delivery.host, delivery.due_ms);
  }

  /** Reads the retry queues now (tests that move a fake clock). */
  poke(): Promise<void> {
    return this.retries.poll();
  }

  /** Attempts in flight plus outcomes not yet written: zero when the dispatcher is idle. */
  get busy(): number {
    return this.known.size;
  }

  private pump(): void {
    if (!this.started || this.stopping) return;
    for (let work = this.scheduler.next(); work; work = this.scheduler.next()) {
      const run: Promise<void> = this.execute(work).finally(() => this.inFlight.delete(run));
      this.inFlight.add(run);
    }
  }

  private async execute(work: Work): Promise<void> {
    const { stub } = work;
    let ops: WriteOp[] = [];
    let outcome: Outcome | null = null;
    try {
      const delivery = await this.options.repo.get(stub.id);
      if (!delivery || delivery.rev !== stub.rev || delivery.state !== stub.state) {
        // Changed since it was read (a manual retry, or a duplicate): the log has the newer say.
        if (delivery?.state === 'retrying') this.retries.dueAt(delivery.host, delivery.due_ms);
      } else if (this.options.clock.now().getTime() > delivery.horizon_from_ms + this.options.horizonMs) {
        ops = [expiredOp(delivery, 'retry horizon passed before the delivery could be attempted')];
      } else {
        outcome = await this.attempt(delivery);
        if (outcome) {
          ops = [outcomeOp(delivery, outcome, this.options.clock.now().getTime())];
          if (outcome.kind === 'retry') ops.push(registerRetryHost(delivery.host));
        }
      }
    } catch (err) {
      this.options.logger.error({ err, deliveryId: stub.id }, 'webhook attempt failed unexpectedly; it stays pending');
    } finally {
      this.scheduler.finish(work);
      if (work.first) this.lanes.progressed(this.scheduler.lane(stub.instanceId));
      else this.retries.progressed(stub.host);
    }
    const settled = () => {
      this.known.release(stub);
      if (outcome?.kind === 'retry') this.retries.dueAt(stub.host, outcome.dueMs);
    };
    if (ops.length > 0) this.writer.write(ops, settled);
    else settled();
    this.pump();
  }

  private async attempt(delivery: DeliveryDoc): Promise<Outcome | null> {
    const key = await this.options.keys.forInstance(delivery.instance_id);
    if (!key) return { kind: 'failed', statusCode: null, error: 'the instance has no signing secret' };
    return this.options.sender.attempt(delivery, key, this.abort.signal);
  }
}
