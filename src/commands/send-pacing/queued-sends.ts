import { typedAs } from '../../domain/recorded.js';
import { DomainError } from '../../domain/errors.js';
import { Pump } from '../../infra/pump.js';
import type { CommandContext } from '../../domain/audit.js';
import type { NetworkMessage } from '../../domain/session/events.js';
import type { Clock } from '../../infra/clock.js';
import { singleNodeClaims, type Claim, type DocClaims } from '../../infra/doc-claims.js';
import type { DocumentStore } from '../../infra/docstore/port.js';
import type { EventStore } from '../../infra/eventstore/port.js';
import type { Logger } from '../../infra/logging/logger.js';
import { SEND_QUEUE, type QueuedSendDoc } from '../../projections/sends/send-queue-projection.js';
import { notConnected } from '../../sessions/network-call.js';
import type { NetworkConnection } from '../../sessions/port.js';
import type { SessionRecorder } from '../../sessions/session-recorder.js';
import type { SendPacer } from './pacer.js';
import { sendNow } from '../sending/send-now.js';
import type { SendGate } from '../sending/send-gate.js';

export interface QueuedSendsOptions {
  docs: DocumentStore;
  events: EventStore;
  recorder: SessionRecorder;
  /** The instance's open connection in this process, or null (asked for every queued send on every pass). */
  liveConnection: (instanceId: string) => NetworkConnection | null;
  pacer: SendPacer;
  clock: Clock;
  logger: Logger;
  /** A send still not out after this long is given up (SendAbandoned). */
  horizonMs?: number;
  /** Several nodes share the queue: each send is claimed by the node sending it. Default: this process is the only one. */
  claims?: DocClaims;
  /** Where a send about to go out meets a cancel of it (DELETE /instances/{id}/messages/{id}). */
  gate?: SendGate;
}

const NOT_CONNECTED_RETRY_MS = 5_000;

/** What the send records is the asker's, caused by the event that queued it. */
const contextOf = (send: QueuedSendDoc): CommandContext => ({
  actor: send.actor,
  correlationId: send.correlation_id,
  causationId: send.queued_event_id,
  accountId: send.account_id,
  instanceId: send.instance_id,
});

/**
 * Sends the queued messages, each instance's in order and at its pace. A send goes out under the
 * message id the client was given, so one repeated after a crash is the same message; its
 * MessageSent is recorded unless the session already has it. Down sessions are waited for up to
 * the horizon; a send the network refuses is given up and recorded as SendAbandoned.
 *
 * With several nodes, a send goes out from the node where its session is connected, claimed on
 * its document first (expiring), so two nodes never send it at once; other nodes leave it alone
 * (no attempt counted) unless it is past the horizon, when any node may give it up.
 */
export class QueuedSends {
  private readonly pump: Pump;
  private readonly claims: DocClaims;

  constructor(private readonly o: QueuedSendsOptions) {
    this.claims = o.claims ?? singleNodeClaims;
    this.pump = new Pump(
      () => this.drain(),
      (err) => o.logger.error({ err }, 'queued sends failed; retrying'),
    );
  }

  async start(): Promise<void> {
    const pending = await this.o.docs.collection<QueuedSendDoc>(SEND_QUEUE).find({ state: 'pending' });
    for (const send of pending) this.o.pacer.queued(send.instance_id);
    this.pump.poke();
  }

  poke(): void {
    this.pump.poke();
  }

  stop(): Promise<void> {
    return this.pump.stop();
  }

  /** Sends every head that is due; answers how long until the next one may be. */
  private async drain(): Promise<number> {
    for (;;) {
      const pending = await this.o.docs.collection<QueuedSendDoc>(SEND_QUEUE).find({ state: 'pending' }, { sort: { pos: 1 }, limit: 1000 });
      const heads = new Map<string, QueuedSendDoc>();
      for (const send of pending) if (!heads.has(send.instance_id)) heads.set(send.instance_id, send);
      const now = this.o.clock.now().getTime();
      let soonest = 1000;
      const due = [...heads.values()].filter((send) => {
        if (!this.mayRunHere(send, now)) return false;
        const wait = Math.max(send.due_ms - now, this.o.pacer.readyInMs(send.instance_id));
        if (wait > 0) soonest = Math.min(soonest, wait);
        return wait === 0;
      });
      if (due.length === 0 || this.pump.stopping) return soonest;
      await Promise.all(due.map((send) => this.run(send)));
    }
  }

  /** One node: always. Several: not while another node holds it, and only where its session is connected (or past the horizon). */
  private mayRunHere(send: QueuedSendDoc, now: number): boolean {
    if (!this.claims.shared) return true;
    if (this.claims.heldElsewhere(send)) return false;
    if (now - send.queued_ms >= (this.o.horizonMs ?? 86_400_000)) return true;
    return this.o.liveConnection(send.instance_id) !== null;
  }

  private async run(send: QueuedSendDoc): Promise<void> {
    // Claimed as read: one another node has since sent, or holds, is not sent here.
    const claim = await this.claims.claim(SEND_QUEUE, send._id, { state: 'pending', attempts: send.attempts });
    if (!claim) return;
    const gate = this.o.gate;
    if (!gate) return this.runClaimed(send, claim);
    // Canceled meanwhile: nothing goes out.
    const stillPending = async () => (await this.o.docs.collection<QueuedSendDoc>(SEND_QUEUE).findOne({ _id: send._id }))?.state === 'pending';
    if (!(await gate.enter(send._id, stillPending))) return claim.release();
    try {
      await this.runClaimed(send, claim);
    } finally {
      gate.leave(send._id);
    }
  }

  private async runClaimed(send: QueuedSendDoc, claim: Claim): Promise<void> {
    const queue = this.o.docs.collection<QueuedSendDoc>(SEND_QUEUE);
    const mine = { ...claim.fence, _id: send._id };
    try {
      const connection = this.o.liveConnection(send.instance_id);
      if (!connection) throw notConnected();
      const message = await this.sendOn(connection, send);
      if (send.attempts === 0 || !(await this.recorded(send.instance_id, message.id))) {
        await this.o.recorder.record(send.instance_id, send.account_id, [{ type: 'MessageSent', data: { message, origin: 'api' } }], contextOf(send));
      }
      await queue.updateOne(mine, { $set: { state: 'sent', attempts: send.attempts + 1, ...claim.ended } }, { durable: true });
      this.o.pacer.dequeued(send.instance_id, true);
    } catch (err) {
      const now = this.o.clock.now().getTime();
      const down = err instanceof DomainError && err.type === 'not_connected';
      if (down && now - send.queued_ms < (this.o.horizonMs ?? 86_400_000)) {
        await queue.updateOne(mine, { $set: { attempts: send.attempts + 1, due_ms: now + NOT_CONNECTED_RETRY_MS, ...claim.ended } });
        return;
      }
      const reason = down ? 'the session stayed down past the horizon' : `the network refused it: ${(err as Error).message}`;
      this.o.logger.warn({ err, messageId: send._id, instanceId: send.instance_id }, 'a queued send was given up');
      await this.o.recorder.record(send.instance_id, send.account_id, [{ type: 'SendAbandoned', data: { message_id: send._id, reason } }], contextOf(send));
      await queue.updateOne(mine, { $set: { state: 'abandoned', attempts: send.attempts + 1, ...claim.ended } }, { durable: true });
      this.o.pacer.dequeued(send.instance_id, false);
    }
  }

  private async sendOn(connection: NetworkConnection, queued: QueuedSendDoc): Promise<NetworkMessage> {
    const { content, to, message_id: messageId } = queued.send;
    return (await sendNow(connection, to, content, messageId)).message;
  }

  private async recorded(instanceId: string, messageId: string): Promise<boolean> {
    const recent = await this.o.events.readStream(`session-${instanceId}`, { direction: 'backwards', maxCount: 500 });
    return recent.some((e) => typedAs(e, 'MessageSent')?.data.message.id === messageId);
  }
}
