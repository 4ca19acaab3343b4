import { typedAs } from '../../domain/recorded.js';
import { Pump } from '../../infra/pump.js';
import type { CommandContext } from '../../domain/audit.js';
import type { NetworkMessage } from '../../domain/session/events.js';
import type { Clock } from '../../infra/clock.js';
import { singleNodeClaims, type Claim, type DocClaims } from '../../infra/doc-claims.js';
import type { DocumentStore } from '../../infra/docstore/port.js';
import type { EventStore } from '../../infra/eventstore/port.js';
import type { Logger } from '../../infra/logging/logger.js';
import { SEND_QUEUE, type QueuedSendDoc } from '../../projections/sends/send-queue-projection.js';
import { laneId, SEND_LANES, type SendLaneDoc } from '../../projections/sends/send-lanes.js';
import { notConnected } from '../../sessions/network-call.js';
import { sendFailure } from './send-failure.js';
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
/** A send that failed for now (a timeout, the socket closing) is tried again after 1 s, 2 s, 4 s... up to 5 minutes. */
const RETRY_BASE_MS = 1000;
const RETRY_MAX_MS = 5 * 60_000;
const HORIZON_MS = 86_400_000;
/** Lanes a pass reads at first (dueLanes). */
const LANE_PAGE = 64;

/** What the send records is the asker's, caused by the event that queued it. */
const contextOf = (send: QueuedSendDoc): CommandContext => ({
  actor: send.actor,
  correlationId: send.correlation_id,
  causationId: send.queued_event_id,
  accountId: send.account_id,
  instanceId: send.instance_id,
});

/**
 * Sends the queued messages at each instance's pace. Each chat is a lane (send-lanes.ts) run in
 * order; an instance's next send is the oldest due head of its lanes, so sends leave in the order
 * they were asked for except where a chat waits. A send goes out under the message id the client
 * was given, so one repeated after a crash is the same message; its MessageSent is recorded unless
 * the session already has it.
 *
 * A failure holds only its own chat (issue 27, finding 11): a refusal that cannot change (not on
 * WhatsApp, an unknown address, content the network refuses) is given up at once and recorded as
 * SendAbandoned (a ReadReceipt Failed webhook with its code); one that may pass (a timeout, the
 * connection closing, the session down) is tried again with back-off while the instance's other
 * chats go on, and given up once the send is a horizon old.
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

  private get queue() {
    return this.o.docs.collection<QueuedSendDoc>(SEND_QUEUE);
  }

  private get lanes() {
    return this.o.docs.collection<SendLaneDoc>(SEND_LANES);
  }

  async start(): Promise<void> {
    const pending = await this.queue.find({ state: 'pending' }, { sort: { pos: 1 } });
    for (const send of pending) this.o.pacer.queued(send.instance_id);
    await this.laneEvery(pending);
    this.pump.poke();
  }

  poke(): void {
    this.pump.poke();
  }

  stop(): Promise<void> {
    return this.pump.stop();
  }

  /** Sends queued before lanes existed get theirs (idempotent: an existing lane is only told of later sends). */
  private async laneEvery(pending: QueuedSendDoc[]): Promise<void> {
    const lanes = new Map<string, { head: QueuedSendDoc; last: number }>();
    for (const send of pending) {
      const id = laneId(send.instance_id, send.send.to);
      const lane = lanes.get(id);
      if (lane) lane.last = Math.max(lane.last, send.pos);
      else lanes.set(id, { head: send, last: send.pos });
    }
    for (const [id, { head, last }] of lanes) {
      await this.lanes.updateOne(
        { _id: id },
        { $setOnInsert: { instance_id: head.instance_id, chat: head.send.to, head_id: head._id, head_pos: head.pos, due_ms: head.due_ms }, $max: { last_pos: last } },
        { upsert: true },
      );
    }
  }

  /** Sends every instance's next due head; answers how long until the next one may be. */
  private async drain(): Promise<number> {
    for (;;) {
      const now = this.o.clock.now().getTime();
      const { due, soonestMs } = await this.dueLanes(now);
      let soonest = Math.min(1000, soonestMs);
      // An instance's next send is its due lane with the oldest head.
      const next = new Map<string, SendLaneDoc>();
      for (const lane of due) {
        const other = next.get(lane.instance_id);
        if (!other || lane.head_pos < other.head_pos) next.set(lane.instance_id, lane);
      }
      const ready = [...next.values()].filter((lane) => {
        const wait = this.o.pacer.readyInMs(lane.instance_id);
        if (wait > 0) soonest = Math.min(soonest, wait);
        return wait === 0;
      });
      if (ready.length === 0 || this.pump.stopping) return soonest;
      const heads = new Map((await this.queue.find({ _id: { $in: ready.map((l) => l.head_id) } })).map((s) => [s._id, s]));
      let moved = 0;
      await Promise.all(
        ready.map(async (lane) => {
          const send = heads.get(lane.head_id);
          // Sent, given up or canceled meanwhile (or a lane a replay made): the lane moves on.
          if (send?.state !== 'pending') {
            moved++;
            return this.advance(lane._id);
          }
          if (!this.mayRunHere(send, now)) return;
          moved++;
          await this.run(send);
          await this.advance(lane._id);
        }),
      );
      if (moved === 0) return soonest;
    }
  }

  /**
   * The lanes due now, and how long until the first of the others is. Read soonest due first, a
   * page at a time (doubled while a whole page is due), so a pass reads at most twice the due lanes
   * and a page more, never every lane that waits (a chat that keeps failing, an instance whose
   * session is down). The index is read in due order with a limit, which both stores stop early.
   */
  private async dueLanes(now: number): Promise<{ due: SendLaneDoc[]; soonestMs: number }> {
    for (let limit = LANE_PAGE; ; limit *= 2) {
      const page = await this.lanes.find({}, { sort: { due_ms: 1 }, limit });
      const waiting = page.findIndex((lane) => lane.due_ms > now);
      if (waiting >= 0) return { due: page.slice(0, waiting), soonestMs: (page[waiting] as SendLaneDoc).due_ms - now };
      if (page.length < limit) return { due: page, soonestMs: Infinity };
    }
  }

  /**
   * Points the lane at its chat's first pending send, or removes it when there is none. Guarded on
   * `last_pos`: a send the projection queued meanwhile makes the write miss, and it is read again.
   */
  private async advance(id: string): Promise<void> {
    for (;;) {
      const lane = await this.lanes.findOne({ _id: id });
      if (!lane) return;
      const [head] = await this.queue.find({ state: 'pending', instance_id: lane.instance_id, 'send.to': lane.chat }, { sort: { pos: 1 }, limit: 1 });
      const guard = { _id: id, last_pos: lane.last_pos };
      if (!head) {
        if ((await this.lanes.deleteOne(guard)) > 0) return;
        continue;
      }
      if (head._id === lane.head_id && head.due_ms === lane.due_ms) return;
      const written = await this.lanes.updateOne(guard, { $set: { head_id: head._id, head_pos: head.pos, due_ms: head.due_ms } });
      if (written.matchedCount > 0) return;
    }
  }

  /** One node: always. Several: not while another node holds it, and only where its session is connected (or past the horizon). */
  private mayRunHere(send: QueuedSendDoc, now: number): boolean {
    if (!this.claims.shared) return true;
    if (this.claims.heldElsewhere(send)) return false;
    if (now - send.queued_ms >= (this.o.horizonMs ?? HORIZON_MS)) return true;
    return this.o.liveConnection(send.instance_id) !== null;
  }

  private async run(send: QueuedSendDoc): Promise<void> {
    // Claimed as read: one another node has since sent, or holds, is not sent here.
    const claim = await this.claims.claim(SEND_QUEUE, send._id, { state: 'pending', attempts: send.attempts });
    if (!claim) return;
    const gate = this.o.gate;
    if (!gate) return this.runClaimed(send, claim);
    // Canceled meanwhile: nothing goes out.
    const stillPending = async () => (await this.queue.findOne({ _id: send._id }))?.state === 'pending';
    if (!(await gate.enter(send._id, stillPending))) return claim.release();
    try {
      await this.runClaimed(send, claim);
    } finally {
      gate.leave(send._id);
    }
  }

  private async runClaimed(send: QueuedSendDoc, claim: Claim): Promise<void> {
    const mine = { ...claim.fence, _id: send._id };
    try {
      const connection = this.o.liveConnection(send.instance_id);
      if (!connection) throw notConnected();
      const message = await this.sendOn(connection, send);
      if (send.attempts === 0 || !(await this.recorded(send.instance_id, message.id))) {
        await this.o.recorder.record(send.instance_id, send.account_id, [{ type: 'MessageSent', data: { message, origin: 'api' } }], contextOf(send));
      }
      await this.queue.updateOne(mine, { $set: { state: 'sent', attempts: send.attempts + 1, ...claim.ended } }, { durable: true });
      this.o.pacer.dequeued(send.instance_id, true);
    } catch (err) {
      const now = this.o.clock.now().getTime();
      const failure = sendFailure(err);
      const expired = now - send.queued_ms >= (this.o.horizonMs ?? HORIZON_MS);
      if (!failure.final && !expired) {
        const down = failure.code === 409;
        const waitMs = down ? NOT_CONNECTED_RETRY_MS : Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** send.attempts);
        const due = now + waitMs;
        await this.queue.updateOne(mine, { $set: { attempts: send.attempts + 1, due_ms: due, last_error: failure.reason.slice(0, 500), ...claim.ended } });
        // The chat waits; the instance's other chats go on.
        await this.lanes.updateOne({ _id: laneId(send.instance_id, send.send.to), head_id: send._id }, { $set: { due_ms: due } });
        if (!down) this.o.logger.info({ err, messageId: send._id, instanceId: send.instance_id, waitMs }, 'a queued send failed for now; retrying');
        return;
      }
      const reason = failure.final ? `the network refused it: ${failure.reason}` : failure.code === 409 ? 'the session stayed down past the horizon' : `it kept failing past the horizon: ${failure.reason}`;
      this.o.logger.warn({ err, messageId: send._id, instanceId: send.instance_id }, 'a queued send was given up');
      const abandoned = { message_id: send._id, reason, to: send.send.to, code: failure.code, timestamp_s: Math.floor(now / 1000) };
      await this.o.recorder.record(send.instance_id, send.account_id, [{ type: 'SendAbandoned', data: abandoned }], contextOf(send));
      await this.queue.updateOne(mine, { $set: { state: 'abandoned', attempts: send.attempts + 1, ...claim.ended } }, { durable: true });
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
