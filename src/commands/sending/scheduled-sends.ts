import type { CommandContext } from '../../domain/audit.js';
import { typedAs } from '../../domain/recorded.js';
import { sessionStream } from '../../domain/session/events.js';
import type { Clock } from '../../infra/clock.js';
import { singleNodeClaims, type DocClaims } from '../../infra/doc-claims.js';
import type { DocumentStore } from '../../infra/docstore/port.js';
import type { EventStore } from '../../infra/eventstore/port.js';
import type { Logger } from '../../infra/logging/logger.js';
import { Pump } from '../../infra/pump.js';
import { SCHEDULED_SENDS, type ScheduledSendDoc } from '../../projections/sends/scheduled-sends-projection.js';
import { notConnected } from '../../sessions/network-call.js';
import type { NetworkConnection } from '../../sessions/port.js';
import type { SessionRecorder } from '../../sessions/session-recorder.js';
import type { SendPacer } from '../send-pacing/pacer.js';
import type { SendGate } from './send-gate.js';
import { sendNow } from './send-now.js';
import { sendFailure } from '../send-pacing/send-failure.js';

export interface ScheduledSendsOptions {
  docs: DocumentStore;
  events: EventStore;
  recorder: SessionRecorder;
  liveConnection: (instanceId: string) => NetworkConnection | null;
  /** Absent: unpaced, every due send goes at once. */
  pacer?: SendPacer;
  /** Told when a due send had to wait for its turn and was queued. */
  onQueued?: () => void;
  gate: SendGate;
  clock: Clock;
  logger: Logger;
  /** A due send whose session stays down this long past its time is given up. */
  horizonMs?: number;
  claims?: DocClaims;
}

const NOT_CONNECTED_RETRY_MS = 5_000;
const RETRY_BASE_MS = 1000;
const RETRY_MAX_MS = 5 * 60_000;
const HORIZON_MS = 86_400_000;

const contextOf = (send: ScheduledSendDoc): CommandContext => ({
  actor: send.actor,
  correlationId: send.correlation_id,
  causationId: send.scheduled_event_id,
  accountId: send.account_id,
  instanceId: send.instance_id,
});

/**
 * Fires scheduled sends at their time, each once: under the message id the client was given (the
 * network keeps one message per id, so a send repeated after a crash is the same message), its
 * MessageSent recorded unless the session already has it. A send that must wait for its turn
 * (send pacing) is handed to the queue as SendQueued under the same id. With several nodes each
 * is claimed by the node whose session is connected; a cancel and a firing meet in the gate.
 */
export class ScheduledSends {
  private readonly pump: Pump;
  private readonly claims: DocClaims;

  constructor(private readonly o: ScheduledSendsOptions) {
    this.claims = o.claims ?? singleNodeClaims;
    this.pump = new Pump(
      () => this.drain(),
      (err) => o.logger.error({ err }, 'scheduled sends failed; retrying'),
    );
  }

  start(): void {
    this.pump.poke();
  }

  poke(): void {
    this.pump.poke();
  }

  stop(): Promise<void> {
    return this.pump.stop();
  }

  private get col() {
    return this.o.docs.collection<ScheduledSendDoc>(SCHEDULED_SENDS);
  }

  /** Fires every due send; answers how long until the next is due (at most a second: new ones arrive by poke). */
  private async drain(): Promise<number> {
    const now = this.o.clock.now().getTime();
    const due = await this.col.find({ state: 'pending', due_ms: { $lte: now } }, { sort: { due_ms: 1 }, limit: 100 });
    const runnable = due.filter((s) => this.mayRunHere(s, now));
    await Promise.all(runnable.map((s) => this.run(s)));
    if (this.pump.stopping) return 1000;
    const [next] = await this.col.find({ state: 'pending', due_ms: { $gt: now } }, { sort: { due_ms: 1 }, limit: 1 });
    const wait = next ? next.due_ms - this.o.clock.now().getTime() : 1000;
    return runnable.length === due.length && due.length > 0 ? 0 : Math.max(0, Math.min(1000, wait));
  }

  private mayRunHere(send: ScheduledSendDoc, now: number): boolean {
    if (!this.claims.shared) return true;
    if (this.claims.heldElsewhere(send)) return false;
    if (now - send.due_ms >= (this.o.horizonMs ?? HORIZON_MS)) return true;
    return this.o.liveConnection(send.instance_id) !== null;
  }

  private async run(send: ScheduledSendDoc): Promise<void> {
    const claim = await this.claims.claim(SCHEDULED_SENDS, send._id, { state: 'pending', attempts: send.attempts });
    if (!claim) return;
    const mine = { ...claim.fence, _id: send._id };
    const stillPending = async () => (await this.col.findOne({ _id: send._id }))?.state === 'pending';
    if (!(await this.o.gate.enter(send._id, stillPending))) {
      await claim.release();
      return;
    }
    try {
      const connection = this.o.liveConnection(send.instance_id);
      if (!connection) throw notConnected();
      const { message_id: messageId, to, content } = send.send;
      if (this.o.pacer && !this.o.pacer.tryNow(send.instance_id)) {
        this.o.pacer.queued(send.instance_id);
        await this.o.recorder.record(send.instance_id, send.account_id, [{ type: 'SendQueued', data: { message_id: messageId, to, content } }], contextOf(send));
        await this.col.updateOne(mine, { $set: { state: 'queued', attempts: send.attempts + 1, ...claim.ended } }, { durable: true });
        this.o.onQueued?.();
        return;
      }
      const { message, fallback } = await sendNow(connection, to, content, messageId);
      if (send.attempts === 0 || !(await this.recorded(send.instance_id, message.id))) {
        const data = fallback ? { message, origin: 'api' as const, fallback } : { message, origin: 'api' as const };
        await this.o.recorder.record(send.instance_id, send.account_id, [{ type: 'MessageSent', data }], contextOf(send));
      }
      await this.col.updateOne(mine, { $set: { state: 'sent', attempts: send.attempts + 1, ...claim.ended } }, { durable: true });
    } catch (err) {
      // The send queue's rule (send-failure.ts): final at once, else retried until the horizon.
      const now = this.o.clock.now().getTime();
      const failure = sendFailure(err);
      const down = failure.code === 409 && !failure.final;
      if (!failure.final && now - send.due_ms < (this.o.horizonMs ?? HORIZON_MS)) {
        const waitMs = down ? NOT_CONNECTED_RETRY_MS : Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** send.attempts);
        await this.col.updateOne(mine, { $set: { attempts: send.attempts + 1, due_ms: now + waitMs, ...claim.ended } });
        return;
      }
      const reason = failure.final ? `the network refused it: ${failure.reason}` : down ? 'the session stayed down past the horizon' : `it kept failing past the horizon: ${failure.reason}`;
      this.o.logger.warn({ err, messageId: send._id, instanceId: send.instance_id }, 'a scheduled send was given up');
      const abandoned = { message_id: send._id, reason, to: send.send.to, code: failure.code, timestamp_s: Math.floor(now / 1000) };
      await this.o.recorder.record(send.instance_id, send.account_id, [{ type: 'SendAbandoned', data: abandoned }], contextOf(send));
      await this.col.updateOne(mine, { $set: { state: 'abandoned', attempts: send.attempts + 1, ...claim.ended } }, { durable: true });
    } finally {
      this.o.gate.leave(send._id);
    }
  }

  private async recorded(instanceId: string, messageId: string): Promise<boolean> {
    const recent = await this.o.events.readStream(sessionStream(instanceId), { direction: 'backwards', maxCount: 500 });
    return recent.some((e) => typedAs(e, 'MessageSent')?.data.message.id === messageId);
  }
}
