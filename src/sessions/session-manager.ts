import type { Logger } from 'pino';
import type { CommandContext } from '../domain/audit.js';
import { conflict, DomainError } from '../domain/errors.js';
import { isLapsed, paymentRequired } from '../domain/instance/billing.js';
import type { NetworkMessage, SessionEvent } from '../domain/session/events.js';
import { systemClock, type Clock } from '../infra/clock.js';
import type { InstanceQueries } from '../projections/instances/instance-queries.js';
import type { SessionQueries } from '../projections/sessions/session-queries.js';
import type { SessionStatusDoc } from '../projections/sessions/sessions-projection.js';
import { networkCall, notConnected } from './network-call.js';
import { AutoRead } from './policies/auto-read.js';
import { CallRejection } from './policies/call-rejection.js';
import type { AuthStateStore, MessagingNetwork, NetworkConnection } from './port.js';
import { DEFAULT_BACKOFF, type BackoffSettings } from './reconnect-policy.js';
import { SessionLifecycle, type SessionHandover, type Slot } from './session-lifecycle.js';
import type { SessionLog } from './session-log.js';

export type { SessionHandover } from './session-lifecycle.js';

export interface SessionManagerOptions {
  network: MessagingNetwork;
  recorder: SessionLog;
  authState: (instanceId: string) => AuthStateStore;
  instances: InstanceQueries;
  sessions: SessionQueries;
  logger: Logger;
  /** Stamps what the manager itself records (the ReadSelf receipt of an auto-read) and the live status. */
  clock?: Clock;
  backoff?: BackoffSettings;
  random?: () => number;
  /** How long a pairing request waits for the network's first QR. */
  qrTimeoutMs?: number;
  /** How long a restart waits for a paired session to open again before answering. */
  openTimeoutMs?: number;
  /** Messages of a session, sent or received, from the stored events (retry requests, quotes). */
  storedMessage?: (instanceId: string, messageId: string, chat?: string) => Promise<NetworkMessage | undefined>;
  /** Deliver status posts and newsletters (RECEIVE_STATUS); default: dropped before the log. */
  receiveStatus?: boolean;
  /** Whether another node took a replaced (440) session over; unset: one node, a 440 is a stop. */
  handover?: SessionHandover;
}

/**
 * Owns the sessions of this process, as the API and the composition root ask for them: restarts
 * paired ones at boot, pairs (QR or code), restarts, logs out, and stops canceled ones. Keeping
 * each socket alive is the lifecycle's job, and what a session does by itself on stored events
 * (auto-read, call rejection) the policies'.
 */
export class SessionManager {
  private readonly lifecycle: SessionLifecycle;

  constructor(private readonly o: SessionManagerOptions) {
    const clock = o.clock ?? systemClock;
    const autoRead = new AutoRead(o.instances, clock, o.logger);
    const callRejection = new CallRejection(o.instances, o.logger);
    this.lifecycle = new SessionLifecycle({
      network: o.network,
      log: o.recorder,
      authState: o.authState,
      logger: o.logger,
      clock,
      backoff: o.backoff ?? DEFAULT_BACKOFF,
      random: o.random ?? Math.random,
      ...(o.storedMessage ? { storedMessage: o.storedMessage } : {}),
      ...(o.receiveStatus === undefined ? {} : { receiveStatus: o.receiveStatus }),
      ...(o.handover ? { handover: o.handover } : {}),
      onStored: (session, events) => void autoRead.react(session, events),
      onCall: (session, call) => void callRejection.react(session, call),
    });
  }

  /** Reconnects every paired instance that is not canceled. */
  async start(): Promise<void> {
    for (const status of await this.o.sessions.paired()) {
      const instance = await this.o.instances.byId(status._id);
      if (!instance || isLapsed(instance.billing_status)) continue;
      const slot = this.lifecycle.add(status._id, instance.account_id, true, status);
      void this.lifecycle.connect(slot);
    }
  }

  /**
   * Ends every socket without recording a disconnect: the sessions are still paired and come back
   * at the next boot, so a deploy does not flap every instance's Connected/Disconnected webhooks.
   */
  async shutdown(): Promise<void> {
    await this.lifecycle.shutdown();
  }

  /** The connected account's own jid, for receipts the account itself causes. */
  async selfJid(instanceId: string): Promise<string | null> {
    // A session open here knows it already; the read model only for one that is not.
    return this.lifecycle.get(instanceId)?.status.jid ?? (await this.o.sessions.status(instanceId))?.jid ?? null;
  }

  /** How many sessions this process holds, by state (for metrics). */
  states(): Record<'connected' | 'connecting' | 'reconnecting' | 'down', number> {
    const counts = { connected: 0, connecting: 0, reconnecting: 0, down: 0 };
    for (const slot of this.lifecycle.all()) {
      if (slot.open) counts.connected++;
      else if (slot.connecting || slot.connection) counts.connecting++;
      else if (slot.timer) counts.reconnecting++;
      else counts.down++;
    }
    return counts;
  }

  /** A socket is open, opening or due to reconnect here (the multi-node ownership keeps the lease of such a session). */
  isLive(instanceId: string): boolean {
    const slot = this.lifecycle.get(instanceId);
    return slot !== undefined && (slot.open || slot.connection !== null || slot.connecting !== null || slot.timer !== null);
  }

  /** Closes the session here without recording anything: another node took it over and records what it sees. */
  async release(instanceId: string): Promise<void> {
    const slot = this.lifecycle.get(instanceId);
    if (slot) await this.lifecycle.retire(slot);
  }

  /** Resolves once the session's pending records (a close's LoggedOut or Disconnected) are stored. */
  async recorded(instanceId: string): Promise<void> {
    await this.lifecycle.get(instanceId)?.recording;
  }

  isConnected(instanceId: string): boolean {
    return this.lifecycle.get(instanceId)?.open ?? false;
  }

  /**
   * The status of a session open in this process, from what it reported (the same document the
   * sessions read model holds, without the read); null when it is not open here. The same object
   * comes back until something changes.
   */
  liveStatus(instanceId: string): SessionStatusDoc | null {
    const slot = this.lifecycle.get(instanceId);
    return slot?.open && slot.status.connected ? slot.status : null;
  }

  /** The open connection, or not_connected. */
  connection(instanceId: string): NetworkConnection {
    const connection = this.liveConnection(instanceId);
    if (!connection) throw notConnected();
    return connection;
  }

  /**
   * The open connection, or null: a session reports itself open before its connection is handed
   * over, and a send in between would fail.
   */
  liveConnection(instanceId: string): NetworkConnection | null {
    const slot = this.lifecycle.get(instanceId);
    return slot?.open && slot.connection ? slot.connection : null;
  }

  /**
   * Records what an API call did on the session's network, with the call's context, in order with
   * what the session itself reports (and into its live status).
   */
  recordAction(instanceId: string, accountId: string, events: SessionEvent[], context: CommandContext): Promise<bigint | null> {
    const slot = this.lifecycle.get(instanceId);
    return slot ? this.lifecycle.recordAction(slot, events, context) : this.o.recorder.record(instanceId, accountId, events, context);
  }

  /** Starts pairing when needed and answers the current QR string. */
  async qr(instanceId: string, accountId: string): Promise<string> {
    const slot = await this.pairingSlot(instanceId, accountId, 'qr');
    return slot.waiters.qr(this.o.qrTimeoutMs ?? 20_000);
  }

  async pairCode(instanceId: string, accountId: string, phone: string): Promise<string> {
    const slot = await this.pairingSlot(instanceId, accountId, 'code');
    // A code may replace the QR only once the network offers pairing (its first QR); a refusal
    // before that (405, 403) answers here with its reason, as the QR request does.
    await slot.waiters.qr(this.o.qrTimeoutMs ?? 20_000);
    const connection = slot.connection;
    if (!connection) throw new DomainError('upstream_failed', 'the network connection could not be opened; retry');
    return networkCall(() => connection.requestPairingCode(phone));
  }

  /** Unpairs: unlinks on the network when connected, wipes the credentials, records it. */
  async logout(instanceId: string, accountId: string, context?: CommandContext): Promise<bigint | null> {
    const slot = this.lifecycle.get(instanceId);
    const status = await this.o.sessions.status(instanceId);
    const paired = slot?.paired || status?.paired === true;
    if (slot) {
      const connection = slot.open ? slot.connection : null;
      // Our own logout makes the network close the socket: that close is not news to record.
      slot.generation++;
      if (connection) await connection.logout().catch((err: unknown) => this.o.logger.warn({ err, instanceId }, 'network logout failed'));
      await this.lifecycle.retire(slot);
    }
    await this.o.authState(instanceId).clear();
    if (!paired) return null;
    // After whatever the retired slot still had on its way to the log.
    await slot?.recording;
    return this.o.recorder.record(instanceId, accountId, [{ type: 'SessionLoggedOut', data: { by: 'user' } }], context);
  }

  /**
   * Drops the connection and opens a new one; answers whether it is connected, waiting (bounded)
   * for a paired session to open again. With neither a pairing nor credentials there is nothing
   * to re-open.
   */
  async restart(instanceId: string, accountId: string): Promise<boolean> {
    await this.requireActive(instanceId);
    const status = await this.o.sessions.status(instanceId);
    const existing = this.lifecycle.get(instanceId);
    const paired = existing ? existing.paired : status?.paired === true;
    const live = existing !== undefined && (existing.connection !== null || existing.connecting !== null || existing.timer !== null);
    if (!paired && !live) return false;
    const slot = existing ?? this.lifecycle.add(instanceId, accountId, paired, status);
    if (existing) {
      await this.lifecycle.halt(existing);
      // Re-read: a logout or a stop may have retired the slot while the old socket ended.
      if (this.lifecycle.get(instanceId) !== existing) return false;
    }
    slot.attempt = 0;
    const opened = slot.waiters.open(slot.open, slot.paired ? (this.o.openTimeoutMs ?? 10_000) : 0);
    await this.lifecycle.connect(slot);
    return opened;
  }

  /**
   * Closes the session without unpairing (the instance was canceled). The credentials stay; the
   * read models learn that the session is down.
   */
  async stop(instanceId: string): Promise<void> {
    const slot = this.lifecycle.get(instanceId);
    if (!slot) return;
    const announced = slot.announced;
    await this.lifecycle.retire(slot);
    if (announced) await this.lifecycle.record(slot, [{ type: 'SessionDisconnected', data: { reason: 'connection_closed' } }]);
  }

  private async pairingSlot(instanceId: string, accountId: string, method: 'qr' | 'code'): Promise<Slot> {
    await this.requireActive(instanceId);
    const pairedBefore = (await this.o.sessions.status(instanceId))?.paired === true;
    // Read after the awaits, and no await until the slot is connecting: concurrent requests share one socket.
    const existing = this.lifecycle.get(instanceId);
    if (existing?.open) throw conflict('the instance is already connected');
    if (existing ? existing.paired : pairedBefore) {
      // Credentials reconnect without a QR; pairing again needs a logout first.
      throw conflict('the instance is paired (its session reconnects with its credentials); log out to pair it again');
    }
    let slot = existing;
    if (slot && (slot.connection || slot.connecting)) {
      await slot.connecting;
    } else {
      slot ??= this.lifecycle.add(instanceId, accountId, false);
      const started = this.lifecycle.record(slot, [{ type: 'SessionPairingStarted', data: { method } }]);
      await Promise.all([started, this.lifecycle.connect(slot)]);
    }
    if (slot.open) throw conflict('the instance is already connected');
    // A socket is open, opening or about to be retried: its QR (or its refusal) reaches the waiters.
    if (!slot.connection && !slot.connecting && !slot.timer) {
      throw slot.failure ?? new DomainError('upstream_failed', 'the network connection could not be opened; retry');
    }
    return slot;
  }

  /** A canceled instance gets no session (the cancellation reactor closed it). */
  private async requireActive(instanceId: string): Promise<void> {
    const instance = await this.o.instances.byId(instanceId);
    if (instance && isLapsed(instance.billing_status)) throw paymentRequired();
  }
}
