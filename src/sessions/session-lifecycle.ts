import type { Logger } from 'pino';
import type { CommandContext } from '../domain/audit.js';
import { DomainError } from '../domain/errors.js';
import { withoutBroadcasts } from '../domain/session/broadcasts.js';
import type { DisconnectReason, NetworkMessage, SessionEvent } from '../domain/session/events.js';
import { evolveSessionStatus, initialSessionStatus } from '../domain/session/session-status.js';
import type { Clock } from '../infra/clock.js';
import type { SessionStatusDoc } from '../projections/sessions/sessions-projection.js';
import { PairingWaiters } from './pairing-waiters.js';
import { openPollVotes } from './poll-votes.js';
import type { LiveSession } from './policies/live-session.js';
import type { AuthStateStore, MessagingNetwork, NetworkClose, NetworkConnection } from './port.js';
import { decideReconnect, type BackoffSettings } from './reconnect-policy.js';
import type { SessionLog } from './session-log.js';

/**
 * The seam for the multi-node work (issue 15): during a rolling deploy the node that takes a
 * session's lease over opens it, and the network replaces the old node's socket (440). This says
 * whether that is what happened, so the old node lets go quietly instead of recording a stop.
 */
export interface SessionHandover {
  movedElsewhere(instanceId: string): Promise<boolean>;
  /** Asked before every connect: false when another node owns the session (it is then let go here, unrecorded). */
  mayOpen?(instanceId: string): Promise<boolean>;
}

/** What a stop the session will not recover from by itself says to the operator. */
const STOP_MESSAGES: Partial<Record<DisconnectReason, string>> = {
  replaced: 'another client opened this session with the same credentials (440); it stays stopped here: restart it to take it back',
  forbidden: 'the network refused this account (403); check the phone for a ban or restriction',
  multidevice_mismatch: 'the phone requires a newer multi-device protocol (411); pair again',
};

/**
 * What a pairing request (QR or code) answers when the socket closed first: the network's refusal
 * and what to do about it (a 405, a 403), or, for a close worth retrying, that.
 */
function pairingError(reason: DisconnectReason, refusal?: string): DomainError {
  if (refusal) return new DomainError('upstream_failed', `the network refused the pairing: ${refusal}`);
  return new DomainError('upstream_failed', `the network closed the connection (${reason}) before offering pairing; retry`);
}

/** One live session per instance, and what is known about it. */
export interface Slot {
  readonly instanceId: string;
  readonly accountId: string;
  connection: NetworkConnection | null;
  /** Bumped on every connect and deliberate end, so callbacks of an older socket are ignored. */
  generation: number;
  open: boolean;
  /** Credentials exist (paired before), so a lost connection is worth re-opening. */
  paired: boolean;
  /** What this session reported of itself: the session status fold, as the read model has it. */
  status: SessionStatusDoc;
  /**
   * The log's last word on this session is SessionConnected (read models show it connected), so
   * losing it must be recorded even when this socket never opened (a failed reconnect at boot).
   */
  announced: boolean;
  /** Pairing requests waiting for a QR, restarts waiting for the session to open. */
  readonly waiters: PairingWaiters;
  attempt: number;
  /** The driver's one immediate retry after a refusal it could mend (a newer client version) is spent. */
  retried: boolean;
  /** Why the last attempt ended without pairing, for a request that comes after the fact; cleared by the next attempt. */
  failure: Error | null;
  /** The tail of this session's appends, so they are stored in the order they happened. */
  recording: Promise<unknown>;
  timer: NodeJS.Timeout | null;
  connecting: Promise<void> | null;
}

export interface SessionLifecycleOptions {
  network: MessagingNetwork;
  log: SessionLog;
  authState: (instanceId: string) => AuthStateStore;
  logger: Logger;
  /** Stamps the live status's times (connected_at, last_disconnect) as the recorder stamps the events. */
  clock: Clock;
  backoff: BackoffSettings;
  random: () => number;
  storedMessage?: (instanceId: string, messageId: string, chat?: string) => Promise<NetworkMessage | undefined>;
  receiveStatus?: boolean;
  handover?: SessionHandover;
  /** Told what a session reported once it is stored (the policies react to it). */
  onStored(session: LiveSession, events: SessionEvent[]): void;
  /** Told of a call ringing on a session. */
  onCall(session: LiveSession, call: { id: string; from: string }): void;
}

/**
 * The connection lifecycle of this process's sessions: opens sockets, records what they report in
 * order, decides on each close whether to reconnect (by reason, with backoff), to stop, or to wipe
 * the credentials, and ends sockets on purpose so their late callbacks no longer count.
 */
export class SessionLifecycle {
  private readonly slots = new Map<string, Slot>();
  private closed = false;

  constructor(private readonly o: SessionLifecycleOptions) {}

  get(instanceId: string): Slot | undefined {
    return this.slots.get(instanceId);
  }

  all(): IterableIterator<Slot> {
    return this.slots.values();
  }

  /**
   * A new slot for the instance. `known` is the read model's status of a paired session: a
   * reconnect may report less of the profile than pairing did (the business details), and the
   * live status must not lose it.
   */
  add(instanceId: string, accountId: string, paired: boolean, known?: SessionStatusDoc | null): Slot {
    const slot: Slot = {
      instanceId,
      accountId,
      connection: null,
      generation: 0,
      open: false,
      paired,
      status: paired && known ? known : { _id: instanceId, ...initialSessionStatus() },
      announced: paired && known?.connected === true,
      waiters: new PairingWaiters(),
      attempt: 0,
      retried: false,
      failure: null,
      recording: Promise.resolve(),
      timer: null,
      connecting: null,
    };
    this.slots.set(instanceId, slot);
    return slot;
  }

  /** Ends every socket; closes that follow are not news (see SessionManager.shutdown). */
  async shutdown(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.slots.values()].map((slot) => this.retire(slot)));
  }

  connect(slot: Slot): Promise<void> {
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    slot.failure = null;
    const generation = ++slot.generation;
    const storedMessage = this.o.storedMessage;
    slot.connecting = (async () => {
      try {
        if (this.o.handover?.mayOpen && !(await this.o.handover.mayOpen(slot.instanceId))) {
          if (generation === slot.generation) await this.retire(slot);
          return;
        }
        // Every pairing attempt starts from fresh credentials: an earlier attempt may have left
        // some behind (a pairing code request saves the phone number as `me`), and a socket that
        // finds them logs in instead of registering, which the network refuses.
        if (!slot.paired) await this.o.authState(slot.instanceId).clear();
        if (generation !== slot.generation) return;
        const connection = await this.o.network.connect({
          instanceId: slot.instanceId,
          accountId: slot.accountId,
          auth: this.o.authState(slot.instanceId),
          ...(storedMessage ? { storedMessage: (id: string, chat?: string) => storedMessage(slot.instanceId, id, chat) } : {}),
          handlers: {
            onEvents: (events) => this.onEvents(slot, generation, events),
            onQr: (qr) => this.onQr(slot, generation, qr),
            onClose: (close) => this.onClose(slot, generation, close),
            onCall: (call) => this.o.onCall(this.live(slot, generation), call),
          },
        });
        if (generation === slot.generation) slot.connection = connection;
        else await connection.end();
      } catch (err) {
        this.o.logger.warn({ err, instanceId: slot.instanceId }, 'connect failed');
        if (generation === slot.generation) this.onClose(slot, generation, { reason: 'unknown' });
      } finally {
        if (generation === slot.generation) slot.connecting = null;
      }
    })();
    return slot.connecting;
  }

  /** Ends the current socket on purpose: its late callbacks no longer count. */
  async halt(slot: Slot): Promise<void> {
    slot.generation++;
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    const connection = slot.connection;
    slot.connection = null;
    slot.open = false;
    slot.waiters.clearQr();
    if (connection) await connection.end().catch(() => undefined);
  }

  /** Ends the session for good in this process: waiters learn it, the slot is forgotten. */
  async retire(slot: Slot): Promise<void> {
    if (this.slots.get(slot.instanceId) === slot) this.slots.delete(slot.instanceId);
    await this.park(slot, new DomainError('conflict', 'the session was closed while pairing'));
  }

  /**
   * Leaves the session down but remembered: whether it is still paired is known here before the
   * read models catch up, so a QR asked for right after an unlink is not refused as "paired".
   */
  private async park(slot: Slot, qrError: Error = pairingError('connection_closed')): Promise<void> {
    slot.failure = qrError;
    slot.waiters.fail(qrError);
    await this.halt(slot);
  }

  /** One slot's records go in order: a disconnect is never stored after the reconnect it caused. */
  record(slot: Slot, events: SessionEvent[], context?: CommandContext, after: Promise<unknown> = Promise.resolve()): Promise<bigint | null> {
    const done = slot.recording.then(() => after).then(() => this.o.log.record(slot.instanceId, slot.accountId, events, context));
    slot.recording = done.catch(() => null);
    return done;
  }

  /**
   * What an API call did on the network (a profile change, a group change), in order with what the
   * session reports, the live status folded as for any stored event.
   */
  async recordAction(slot: Slot, events: SessionEvent[], context: CommandContext): Promise<bigint | null> {
    const position = await this.record(slot, events, context);
    const at = this.o.clock.now().toISOString();
    for (const event of events) slot.status = evolveSessionStatus(slot.status, event, at);
    return position;
  }

  /** The session as the socket of `generation` sees it, for the policies. */
  private live(slot: Slot, generation: number): LiveSession {
    return {
      instanceId: slot.instanceId,
      connection: () => (generation === slot.generation ? slot.connection : null),
      isOpen: () => generation === slot.generation && slot.open,
      selfJid: () => slot.status.jid,
      record: (events) => this.record(slot, events),
    };
  }

  private async onEvents(slot: Slot, generation: number, reported: SessionEvent[]): Promise<void> {
    // A socket we ended (restart, logout, stop) may still flush; its news no longer describes us.
    if (generation !== slot.generation) return;
    const kept = this.o.receiveStatus ? reported : withoutBroadcasts(reported);
    if (kept.length === 0) return;
    const storedMessage = this.o.storedMessage;
    const self = [slot.status.jid].filter((j): j is string => typeof j === 'string' && j !== '');
    const events = storedMessage ? await openPollVotes(kept, (id) => storedMessage(slot.instanceId, id), self) : kept;
    for (const event of events) {
      if (event.type === 'SessionConnected') {
        slot.open = true;
        slot.paired = true;
        slot.attempt = 0;
        slot.retried = false;
        slot.waiters.clearQr();
      }
    }
    await this.record(slot, events);
    // Once stored, by the read model's own fold, so the two never disagree about the past.
    const at = this.o.clock.now().toISOString();
    for (const event of events) slot.status = evolveSessionStatus(slot.status, event, at);
    if (events.some((e) => e.type === 'SessionConnected')) {
      slot.announced = true;
      slot.waiters.settleOpen(slot.open);
    }
    // Not awaited: a policy's network call waiting here would hold the driver's event delivery
    // (two auto-reading instances messaging each other would deadlock).
    this.o.onStored(this.live(slot, generation), events);
  }

  private onQr(slot: Slot, generation: number, qr: string): void {
    if (generation !== slot.generation) return;
    slot.waiters.offerQr(qr);
  }

  private onClose(slot: Slot, generation: number, close: NetworkClose): void {
    if (generation !== slot.generation || this.closed) return;
    const handover = this.o.handover;
    if (close.reason === 'replaced' && handover) {
      // Only a node that took the session's lease over replaces it on purpose: then this one just
      // lets go, with nothing to record (the new owner records what it sees).
      void handover
        .movedElsewhere(slot.instanceId)
        .catch(() => false)
        .then((moved) => {
          if (generation !== slot.generation) return;
          if (moved) void this.retire(slot);
          else this.onCloseNow(slot, close);
        });
      return;
    }
    this.onCloseNow(slot, close);
  }

  private onCloseNow(slot: Slot, { reason, statusCode, message = STOP_MESSAGES[reason], retry }: NetworkClose): void {
    const wasOpen = slot.open;
    slot.connection = null;
    slot.open = false;
    slot.waiters.clearQr();
    slot.attempt += 1;
    // The network asks for a fresh socket only once the phone has paired it: the credentials are
    // the account's from now on, and a drop before the first open must not give them up.
    if (reason === 'restart_required') slot.paired = true;
    // The driver mended what was refused (a newer client version): one immediate retry, unrecorded.
    const retryNow = retry === true && !slot.retried;
    if (retryNow) slot.retried = true;
    const decision = retryNow ? ({ action: 'reconnect', delayMs: 0 } as const) : decideReconnect(reason, slot.attempt, this.o.random(), this.o.backoff);
    const wipe = decision.action === 'wipe';
    if (decision.action !== 'reconnect' || retryNow) {
      this.o.logger.warn({ instanceId: slot.instanceId, reason, statusCode, detail: message, action: retryNow ? 'retry' : decision.action }, `session ${retryNow ? 'retried' : 'stopped'}: ${message ?? reason}`);
    }
    const events: SessionEvent[] = [];
    if (wipe && slot.paired) {
      // One event, not Disconnected then LoggedOut: it says both, and integrators get one Disconnected webhook.
      events.push({ type: 'SessionLoggedOut', data: { by: 'phone' } });
    } else if (wasOpen || slot.announced || decision.action === 'stop' || (decision.action !== 'reconnect' && slot.paired)) {
      // A stop is recorded even before the first pairing: the refusal (405, 403) is the history's to keep.
      events.push({
        type: 'SessionDisconnected',
        data: { reason, ...(statusCode === undefined ? {} : { status_code: statusCode }), ...(message === undefined ? {} : { message }) },
      });
    }
    if (events.length > 0) slot.announced = false;
    if (wipe) slot.paired = false;
    // The wipe comes first: a LoggedOut in the log always means the credentials are gone.
    const cleared = wipe ? this.o.authState(slot.instanceId).clear() : Promise.resolve();
    // Chained now, not once the wipe is done: whoever waits on the slot's records waits for these too.
    void this.record(slot, events, undefined, cleared).catch((err: unknown) => this.o.logger.error({ err, instanceId: slot.instanceId }, 'recording a disconnect failed'));

    // An unpaired socket that closes (QR expired) is not worth re-opening until asked again.
    if (decision.action === 'reconnect' && (slot.paired || retryNow)) {
      // A restart waiting on this session keeps waiting only through an immediate reconnect.
      if (decision.delayMs > 0) slot.waiters.settleOpen(false);
      slot.timer = setTimeout(() => void this.connect(slot), decision.delayMs);
      slot.timer.unref();
    } else {
      void this.park(slot, pairingError(reason, decision.action === 'stop' ? message : undefined));
    }
  }
}
