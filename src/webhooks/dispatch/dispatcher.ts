import { setMaxListeners } from 'node:events';
import type { Leases } from '../../cluster/leases.js';
import type { Placement } from '../../cluster/placement.js';
import type { Clock } from '../../infra/clock.js';
import { singleNodeClaims, type Claim, type DocClaims } from '../../infra/doc-claims.js';
import type { DocumentStore, Filter, WriteOp } from '../../infra/docstore/port.js';
import type { Logger } from '../../infra/logging/logger.js';
import { WorkMeter, type StageWork } from '../../infra/metrics/work-meter.js';
import type { QueuedNotice } from '../webhook-reactor.js';
import { registerRetryHost, type DeliveryRepo } from '../deliveries/delivery-repo.js';
import { DELIVERIES, type DeliveryDoc, type DeliveryStatus } from '../deliveries/documents.js';
import { afterAttempt, dueNow, expired, saveOp, type Outcome } from '../deliveries/outcomes.js';
import { HeldDeliveries } from './held-deliveries.js';
import { claimMarginMs, everyLane, LaneLeases, type LaneOwnership } from './lane-claims.js';
import { LaneLoader } from './lane-loader.js';
import { OutcomeWriter } from './outcome-writer.js';
import { RetryLoader } from './retry-loader.js';
import { Scheduler, type SchedulerLimits, type Stub, type Work } from './scheduler.js';
import type { Sender } from './sender.js';
import type { SigningKeys } from './signing-keys.js';

/** After an outcome could not be written: the store gets a moment before the attempt goes again. */
const UNRECORDED_AGAIN_MS = 1000;

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
  /** Told of each delivery once its new state is saved (statistics count the final ones). */
  onSettled?: (delivery: DeliveryDoc) => void;
  /** Where the dispatcher's synchronous work is counted (/metrics); default a meter of its own. */
  work?: WorkMeter;
  /** Several nodes share the document store: lanes and retries are claimed. Absent: this process is the only one. */
  cluster?: { leases: Leases; claims: DocClaims; ttlMs: number; clock: Clock; placement?: Placement };
}

/** What one attempt runs under: aborted when this node must stop it; the fence its outcome is written with. */
interface AttemptRights {
  signal: AbortSignal;
  fence?: Filter;
  claim?: Claim;
}

/**
 * Sends what the reactor recorded. The delivery log is the only durable state: this process
 * holds a bounded window of it in memory (lanes of first attempts, per-host retry queues),
 * attempts each delivery as the scheduler allows, and writes every outcome back. Anything it
 * held when it stopped or crashed is still queued or retrying in the log and is sent after the
 * restart: at least once, never lost.
 *
 * With several nodes on one document store (`cluster`), each instance's lane of first attempts is
 * fed by the one node that holds its lane lease, and each retry is claimed by the node that
 * starts it. An attempt is aborted a margin before its claim would lapse, so no two nodes attempt
 * a delivery at once while a claim holds; a dead node's claims lapse and the others take over.
 */
export class Dispatcher {
  private readonly scheduler: Scheduler;
  private readonly known = new HeldDeliveries();
  private readonly writer: OutcomeWriter;
  private readonly lanes: LaneLoader;
  private readonly retries: RetryLoader;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly abort = new AbortController();
  /** Deliveries someone retried by hand while this process held them: applied once they settle. */
  private readonly retryWhenSettled = new Set<string>();
  /** Attempts whose outcome could not be written, waiting to go again (unrecorded). */
  private readonly unrecordedTimers = new Set<NodeJS.Timeout>();
  private readonly dispatchWork: StageWork;
  private started = false;
  private stopping = false;
  private readonly claims: DocClaims;
  private readonly laneLeases: LaneLeases | null;
  private readonly ownership: LaneOwnership;

  constructor(private readonly options: DispatcherOptions) {
    this.scheduler = new Scheduler(options.limits);
    const work = options.work ?? new WorkMeter();
    this.dispatchWork = work.stage('webhook_dispatch');
    this.writer = new OutcomeWriter(options.docs, options.logger, work.lane('webhook-outcomes'));
    const pump = () => this.pump();
    const cluster = options.cluster;
    this.claims = cluster?.claims ?? singleNodeClaims;
    this.laneLeases = cluster
      ? new LaneLeases({
          leases: cluster.leases,
          instances: () => options.repo.instancesWithHooks(),
          clock: cluster.clock,
          logger: options.logger,
          ttlMs: cluster.ttlMs,
          ...(cluster.placement ? { placement: cluster.placement } : {}),
          stop: this.abort.signal,
          gained: (id) => this.lanes.gained(id),
          lost: (id) => this.lanes.reset(id),
        })
      : null;
    this.ownership = this.laneLeases ?? everyLane(this.abort.signal);
    this.lanes = new LaneLoader(options.repo, this.scheduler, this.known, options.logger, pump, this.ownership, cluster !== undefined);
    this.retries = new RetryLoader(options.repo, this.scheduler, this.known, options.clock, options.logger, pump, this.claims);
    // Every in-flight request listens on the one stop signal.
    setMaxListeners(0, this.abort.signal);
  }

  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    // The lanes this node feeds are claimed before they are read.
    await this.laneLeases?.start();
    await this.lanes.start();
    await this.retries.start();
  }

  /** Stops taking work; lets attempts in flight finish (up to the grace), then records their outcomes. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.lanes.stop();
    this.retries.stop();
    for (const timer of this.unrecordedTimers) clearTimeout(timer);
    this.unrecordedTimers.clear();
    if (this.inFlight.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.options.stopGraceMs)));
      await Promise.race([Promise.all(this.inFlight), grace]);
      clearTimeout(timer);
      this.abort.abort();
      await Promise.all(this.inFlight);
    }
    await this.writer.drain();
    // Outcomes written: another node may take the lanes at once.
    await this.laneLeases?.stop();
  }

  /** The runner committed deliveries the reactor recorded. */
  queued(notices: readonly QueuedNotice[]): void {
    this.lanes.committed(notices);
  }

  /**
   * Makes a delivery due now, with a fresh retry horizon. One this process holds (waiting or in
   * flight) is changed once its attempt settles, so the attempt's outcome cannot overwrite it.
   */
  async retryByHand(delivery: DeliveryDoc): Promise<DeliveryStatus> {
    if (this.known.has(delivery._id)) {
      this.retryWhenSettled.add(delivery._id);
      return 'pending';
    }
    const due = dueNow(delivery, this.options.clock.now().getTime());
    await this.options.repo.save(due);
    this.retries.dueAt(due.host, due.due_ms);
    return 'pending';
  }

  /** Reads the retry queues now (tests that move a fake clock). */
  poke(): Promise<void> {
    return this.retries.poll();
  }

  /** Attempts in flight plus outcomes not yet written: zero when the dispatcher is idle. */
  /** The instances whose lane of first attempts this node feeds (with many nodes; 0 on one). */
  get lanesHeld(): number {
    return this.laneLeases?.count() ?? 0;
  }

  get busy(): number {
    return this.known.size;
  }

  private pump(): void {
    if (!this.started || this.stopping) return;
    const started = performance.now();
    for (let work = this.scheduler.next(); work; work = this.scheduler.next()) {
      const run: Promise<void> = this.execute(work).finally(() => this.inFlight.delete(run));
      this.inFlight.add(run);
    }
    this.dispatchWork.since(started);
  }

  private async execute(work: Work): Promise<void> {
    const { stub } = work;
    // Held since it was read: a retry by hand waits for this attempt (retryByHand), so no re-read.
    const delivery = stub.doc;
    let write: DeliveryDoc | undefined;
    let outcome: Outcome | null = null;
    let rights: AttemptRights | null = null;
    let settling = 0;
    try {
      rights = await this.rightsFor(work);
      if (!rights) {
        // Not this node's to attempt now: another node holds it, or this node's claim is lapsing.
        if (work.first) this.lanes.reset(stub.instanceId);
      } else if (this.options.clock.now().getTime() > delivery.horizon_from_ms + this.options.horizonMs) {
        write = expired(delivery, 'retry horizon passed before the delivery could be attempted');
      } else {
        outcome = await this.attempt(delivery, rights.signal);
        settling = performance.now();
        if (outcome) write = afterAttempt(delivery, outcome, this.options.clock.now().getTime());
        // Aborted: left as it was in the log, for whoever attempts it next.
        else void rights.claim?.release().catch(() => undefined);
      }
    } catch (err) {
      this.options.logger.error({ err, deliveryId: stub.id }, 'webhook attempt failed unexpectedly; it will be retried');
      const nowMs = this.options.clock.now().getTime();
      outcome = { kind: 'retry', statusCode: null, error: 'internal error before sending', dueMs: nowMs + 1000 };
      // Several nodes, and no claim was made: the delivery may be another node's; the log keeps it as it is.
      write = this.options.cluster && !rights ? undefined : { ...afterAttempt(delivery, outcome, nowMs), attempts: delivery.attempts };
    } finally {
      this.scheduler.finish(work);
      if (work.first) this.lanes.progressed(this.scheduler.lane(stub.instanceId));
      else this.retries.progressed(stub.host);
    }
    if (write) {
      const ops: WriteOp[] = [saveOp(write, rights?.fence ? { fence: rights.fence } : {})];
      if (write.state === 'retrying') ops.push(registerRetryHost(write.host));
      const saved = write;
      this.writer.write(ops, (committed) => (committed ? this.settle(stub, saved) : this.unrecorded(stub)));
    } else this.settle(stub, null);
    if (settling > 0) this.dispatchWork.since(settling);
    this.pump();
  }

  /**
   * The outcome could not be written: the log still has the delivery as this process read it,
   * and a lane does not read back what it has passed. It stays held and is attempted again
   * shortly, in any order, like a retry (a duplicate for the receiver, never a loss).
   */
  private unrecorded(stub: Stub): void {
    const timer = setTimeout(() => {
      this.unrecordedTimers.delete(timer);
      if (this.stopping) return;
      this.scheduler.addRetry(stub);
      this.pump();
    }, UNRECORDED_AGAIN_MS);
    this.unrecordedTimers.add(timer);
  }

  /** The outcome is in the log: the delivery is no longer this process's to hold. */
  private settle(stub: Stub, saved: DeliveryDoc | null): void {
    this.known.release(stub);
    // A lane taken back while this attempt hung may have stopped before it (nothing recorded: still queued).
    this.lanes.released(stub);
    if (saved) this.options.onSettled?.(saved);
    if (saved?.state === 'retrying') this.retries.dueAt(saved.host, saved.due_ms);
    if (!this.retryWhenSettled.delete(stub.id)) return;
    void (async () => {
      // Gone only if the retention sweep removed it once its outcome was final: the retry was
      // already answered "pending", so it is written again from what this process held.
      const current = (await this.options.repo.get(stub.id)) ?? saved ?? stub.doc;
      await this.retryByHand(current);
    })().catch((err: unknown) => this.options.logger.error({ err, deliveryId: stub.id }, 'retry by hand could not be applied'));
  }

  /**
   * One node: always, under the stop signal. Several: a first attempt under its lane's lease,
   * fenced on the delivery still being as read; a retry under a claim of its own (null when
   * another node has it), aborted a margin before the claim would lapse.
   */
  private async rightsFor(work: Work): Promise<AttemptRights | null> {
    if (!this.options.cluster) return { signal: this.abort.signal };
    const { doc } = work.stub;
    const asRead = { state: doc.state, attempts: doc.attempts, due_ms: doc.due_ms };
    if (work.first) {
      const signal = this.ownership.attemptSignal(doc.instance_id);
      return signal ? { signal, fence: asRead } : null;
    }
    const claim = await this.claims.claim(DELIVERIES, doc._id, asRead);
    if (!claim) return null;
    const margin = claimMarginMs(this.options.cluster.ttlMs);
    const left = claim.until - this.options.cluster.clock.now().getTime() - margin;
    if (left <= 0) {
      void claim.release().catch(() => undefined);
      return null;
    }
    return { signal: AbortSignal.any([this.abort.signal, AbortSignal.timeout(left)]), fence: claim.fence, claim };
  }

  private async attempt(delivery: DeliveryDoc, signal: AbortSignal): Promise<Outcome | null> {
    const key = await this.options.keys.forInstance(delivery.instance_id);
    if (!key) return { kind: 'failed', statusCode: null, error: 'the instance has no signing secret' };
    return this.options.sender.attempt(delivery, key, signal);
  }
}
