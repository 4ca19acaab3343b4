import type { Logger } from 'pino';
import type { CommandContext } from '../commands/command-handler.js';
import { conflict, DomainError } from '../domain/errors.js';
import { isLapsed, paymentRequired } from '../domain/instance/billing.js';
import { withoutBroadcasts } from '../domain/session/broadcasts.js';
import type { DisconnectReason, NetworkMessage, SessionEvent } from '../domain/session/events.js';
import { systemClock, type Clock } from '../infra/clock.js';
import type { InstanceQueries } from '../projections/instances/instance-queries.js';
import { emptyStatus, foldLiveStatus } from '../projections/sessions/live-status.js';
import type { SessionQueries } from '../projections/sessions/session-queries.js';
import type { SessionStatusDoc } from '../projections/sessions/sessions-projection.js';
import type { AuthStateStore, MessagingNetwork, NetworkClose, NetworkConnection } from './port.js';
import { NotConnectedError } from './port.js';
import { decideReconnect, DEFAULT_BACKOFF, type BackoffSettings } from './reconnect-policy.js';
import type { SessionRecorder } from './session-recorder.js';


export interface SessionManagerOptions {
  network: MessagingNetwork;
  recorder: SessionRecorder;
  authState: (instanceId: string) => AuthStateStore;
  instances: InstanceQueries;
  sessions: SessionQueries;
  logger: Logger;
  /** Stamps what the manager itself records (the ReadSelf receipt of an auto-read). */
  clock?: Clock;
  backoff?: BackoffSettings;
  random?: () => number;
  /** How long a pairing request waits for the network's first QR. */
  qrTimeoutMs?: number;
  /** How long a restart waits for a paired session to open again before answering. */
  openTimeoutMs?: number;
  /** Messages of a session, sent or received, from the stored events (retry requests, quotes). */
  storedMessage?: (instanceId: string, messageId: string) => Promise<NetworkMessage | undefined>;
  /** Deliver status posts and newsletters (RECEIVE_STATUS); default: dropped before the log. */
  receiveStatus?: boolean;
  /** Whether another node took a replaced (440) session over; unset: one node, a 440 is a stop. */
  handover?: SessionHandover;
}

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

/** One live session per instance, and what is known about it. */
interface Slot {
  instanceId: string;
  accountId: string;
  connection: NetworkConnection | null;
  /** Bumped on every connect and deliberate end, so callbacks of an older socket are ignored. */
  generation: number;
  open: boolean;
  /** Credentials exist (paired before), so a lost connection is worth re-opening. */
  paired: boolean;
  /** What this session reported of itself, folded as the sessions projection folds it. */
  status: SessionStatusDoc;
  /**
   * The log's last word on this session is SessionConnected (read models show it connected), so
   * losing it must be recorded even when this socket never opened (a failed reconnect at boot).
   */
  announced: boolean;
  qr: string | null;
  qrWaiters: Waiter<string>[];
  /** Callers waiting for the session to open (restart); told false when it will not soon. */
  openWaiters: ((open: boolean) => void)[];
  attempt: number;
  /** The tail of this session's appends, so they are stored in the order they happened. */
  recording: Promise<unknown>;
  timer: NodeJS.Timeout | null;
  connecting: Promise<void> | null;
}

interface Waiter<T> {
  resolve(value: T): void;
  reject(error: Error): void;
}

/**
 * Owns the sessions of this process: opens them, records what they report, reconnects by
 * disconnect reason, restarts paired ones at boot, and closes them on logout or cancellation.
 */
export class SessionManager {
  private readonly slots = new Map<string, Slot>();
  private readonly backoff: BackoffSettings;
  private readonly random: () => number;
  private closed = false;

  constructor(private readonly o: SessionManagerOptions) {
    this.backoff = o.backoff ?? DEFAULT_BACKOFF;
    this.random = o.random ?? Math.random;
  }

  /** Reconnects every paired instance that is not canceled. */
  async start(): Promise<void> {
    for (const status of await this.o.sessions.paired()) {
      const instance = await this.o.instances.byId(status._id);
      if (!instance || isLapsed(instance.billing_status)) continue;
      const slot = this.slotFor(status._id, instance.account_id, true, status);
      void this.connect(slot);
    }
  }

  /**
   * Ends every socket without recording a disconnect: the sessions are still paired and come back
   * at the next boot, so a deploy does not flap every instance's Connected/Disconnected webhooks.
   */
  async shutdown(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.slots.values()].map((slot) => this.retire(slot)));
  }

  /** The connected account's own jid, for receipts the account itself causes. */
  async selfJid(instanceId: string): Promise<string | null> {
    // A session open here knows it already; the read model only for one that is not.
    return this.slots.get(instanceId)?.status.jid ?? (await this.o.sessions.status(instanceId))?.jid ?? null;
  }

  /** How many sessions this process holds, by state (for metrics). */
  states(): Record<'connected' | 'connecting' | 'reconnecting' | 'down', number> {
    const counts = { connected: 0, connecting: 0, reconnecting: 0, down: 0 };
    for (const slot of this.slots.values()) {
      if (slot.open) counts.connected++;
      else if (slot.connecting || slot.connection) counts.connecting++;
      else if (slot.timer) counts.reconnecting++;
      else counts.down++;
    }
    return counts;
  }

  /** A socket is open, opening or due to reconnect here (the multi-node ownership keeps the lease of such a session). */
  isLive(instanceId: string): boolean {
    const slot = this.slots.get(instanceId);
    return slot !== undefined && (slot.open || slot.connection !== null || slot.connecting !== null || slot.timer !== null);
  }

  /** Closes the session here without recording anything: another node took it over and records what it sees. */
  async release(instanceId: string): Promise<void> {
    const slot = this.slots.get(instanceId);
    if (slot) await this.retire(slot);
  }

  isConnected(instanceId: string): boolean {
    return this.slots.get(instanceId)?.open ?? false;
  }

  /**
   * The status of a session open in this process, from what it reported (the same document the
   * sessions read model holds, without the read); null when it is not open here. The same object
   * comes back until something changes.
   */
  liveStatus(instanceId: string): SessionStatusDoc | null {
    const slot = this.slots.get(instanceId);
    return slot?.open && slot.status.connected ? slot.status : null;
  }

  /** The open connection, or 409 not_connected. */
  connection(instanceId: string): NetworkConnection {
    const slot = this.slots.get(instanceId);
    if (!slot?.open || !slot.connection) throw new DomainError('not_connected', 'the instance is not connected');
    return slot.connection;
  }

  /** Starts pairing when needed and answers the current QR string. */
  async qr(instanceId: string, accountId: string): Promise<string> {
    const slot = await this.pairingSlot(instanceId, accountId, 'qr');
    if (slot.qr) return slot.qr;
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        slot.qrWaiters = slot.qrWaiters.filter((w) => w !== waiter);
        reject(new DomainError('upstream_failed', 'the network did not offer a QR code in time; retry'));
      }, this.o.qrTimeoutMs ?? 20_000);
      const waiter: Waiter<string> = {
        resolve: (qr) => {
          clearTimeout(timer);
          resolve(qr);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      slot.qrWaiters.push(waiter);
    });
  }

  async pairCode(instanceId: string, accountId: string, phone: string): Promise<string> {
    const slot = await this.pairingSlot(instanceId, accountId, 'code');
    const connection = slot.connection;
    if (!connection) throw new DomainError('upstream_failed', 'the network connection could not be opened; retry');
    return networkCall(() => connection.requestPairingCode(phone));
  }

  /** Unpairs: unlinks on the network when connected, wipes the credentials, records it. */
  async logout(instanceId: string, accountId: string, context?: CommandContext): Promise<bigint | null> {
    const slot = this.slots.get(instanceId);
    const status = await this.o.sessions.status(instanceId);
    const paired = slot?.paired || status?.paired === true;
    if (slot) {
      const connection = slot.open ? slot.connection : null;
      // Our own logout makes the network close the socket: that close is not news to record.
      slot.generation++;
      if (connection) await connection.logout().catch((err: unknown) => this.o.logger.warn({ err, instanceId }, 'network logout failed'));
      await this.retire(slot);
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
    const existing = this.slots.get(instanceId);
    const paired = existing ? existing.paired : status?.paired === true;
    const live = existing !== undefined && (existing.connection !== null || existing.connecting !== null || existing.timer !== null);
    if (!paired && !live) return false;
    const slot = existing ?? this.slotFor(instanceId, accountId, paired, status);
    if (existing) {
      await this.halt(existing);
      // Re-read: a logout or a stop may have retired the slot while the old socket ended.
      if (this.slots.get(instanceId) !== existing) return false;
    }
    slot.attempt = 0;
    const opened = this.waitOpen(slot, slot.paired ? (this.o.openTimeoutMs ?? 10_000) : 0);
    await this.connect(slot);
    return opened;
  }

  /**
   * Closes the session without unpairing (the instance was canceled). The credentials stay; the
   * read models learn that the session is down.
   */
  async stop(instanceId: string): Promise<void> {
    const slot = this.slots.get(instanceId);
    if (!slot) return;
    const announced = slot.announced;
    await this.retire(slot);
    if (announced) await this.record(slot, [{ type: 'SessionDisconnected', data: { reason: 'connection_closed' } }]);
  }

  private async pairingSlot(instanceId: string, accountId: string, method: 'qr' | 'code'): Promise<Slot> {
    await this.requireActive(instanceId);
    const pairedBefore = (await this.o.sessions.status(instanceId))?.paired === true;
    // Read after the awaits, and no await until the slot is connecting: concurrent requests share one socket.
    const existing = this.slots.get(instanceId);
    if (existing?.open) throw conflict('the instance is already connected');
    if (existing ? existing.paired : pairedBefore) {
      // Credentials reconnect without a QR; pairing again needs a logout first.
      throw conflict('the instance is paired (its session reconnects with its credentials); log out to pair it again');
    }
    let slot = existing;
    if (slot && (slot.connection || slot.connecting)) {
      await slot.connecting;
    } else {
      slot ??= this.slotFor(instanceId, accountId, false);
      const started = this.record(slot, [{ type: 'SessionPairingStarted', data: { method } }]);
      await Promise.all([started, this.connect(slot)]);
    }
    if (slot.open) throw conflict('the instance is already connected');
    if (!slot.connection) throw new DomainError('upstream_failed', 'the network connection could not be opened; retry');
    return slot;
  }

  /** A canceled instance gets no session (the cancellation reactor closed it). */
  private async requireActive(instanceId: string): Promise<void> {
    const instance = await this.o.instances.byId(instanceId);
    if (instance && isLapsed(instance.billing_status)) throw paymentRequired();
  }

  /** Resolves true once the session opens, false when it closes or after `timeoutMs`. */
  private waitOpen(slot: Slot, timeoutMs: number): Promise<boolean> {
    if (slot.open) return Promise.resolve(true);
    if (timeoutMs <= 0) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => done(false), timeoutMs);
      const done = (open: boolean) => {
        clearTimeout(timer);
        slot.openWaiters = slot.openWaiters.filter((w) => w !== done);
        resolve(open);
      };
      slot.openWaiters.push(done);
    });
  }

  private settleOpenWaiters(slot: Slot, open: boolean): void {
    const waiters = slot.openWaiters;
    slot.openWaiters = [];
    for (const w of waiters) w(open);
  }

  /**
   * `known` is the read model's status of a paired session: a reconnect may report less of the
   * profile than pairing did (the business details), and the live status must not lose it.
   */
  private slotFor(instanceId: string, accountId: string, paired: boolean, known?: SessionStatusDoc | null): Slot {
    const slot: Slot = {
      instanceId,
      accountId,
      connection: null,
      generation: 0,
      open: false,
      paired,
      status: paired && known ? known : emptyStatus(instanceId),
      announced: paired && known?.connected === true,
      qr: null,
      qrWaiters: [],
      openWaiters: [],
      attempt: 0,
      recording: Promise.resolve(),
      timer: null,
      connecting: null,
    };
    this.slots.set(instanceId, slot);
    return slot;
  }

  private connect(slot: Slot): Promise<void> {
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    const generation = ++slot.generation;
    slot.connecting = (async () => {
      try {
        if (this.o.handover?.mayOpen && !(await this.o.handover.mayOpen(slot.instanceId))) {
          if (generation === slot.generation) await this.retire(slot);
          return;
        }
        const connection = await this.o.network.connect({
          instanceId: slot.instanceId,
          accountId: slot.accountId,
          auth: this.o.authState(slot.instanceId),
          ...(this.o.storedMessage ? { storedMessage: (id: string) => this.o.storedMessage!(slot.instanceId, id) } : {}),
          handlers: {
            onEvents: (events) => this.onEvents(slot, generation, events),
            onQr: (qr) => this.onQr(slot, generation, qr),
            onClose: (close) => this.onClose(slot, generation, close),
            onCall: (call) => void this.onCall(slot, generation, call),
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
  private async halt(slot: Slot): Promise<void> {
    slot.generation++;
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    const connection = slot.connection;
    slot.connection = null;
    slot.open = false;
    slot.qr = null;
    if (connection) await connection.end().catch(() => undefined);
  }

  /** Ends the session for good in this process: waiters learn it, the slot is forgotten. */
  private async retire(slot: Slot): Promise<void> {
    if (this.slots.get(slot.instanceId) === slot) this.slots.delete(slot.instanceId);
    await this.park(slot, new DomainError('conflict', 'the session was closed while pairing'));
  }

  /**
   * Leaves the session down but remembered: whether it is still paired is known here before the
   * read models catch up, so a QR asked for right after an unlink is not refused as "paired".
   */
  private async park(slot: Slot, qrError = new DomainError('upstream_failed', 'the network closed the connection before offering a QR; retry')): Promise<void> {
    this.settleOpenWaiters(slot, false);
    const waiters = slot.qrWaiters;
    slot.qrWaiters = [];
    for (const w of waiters) w.reject(qrError);
    await this.halt(slot);
  }

  private async onEvents(slot: Slot, generation: number, reported: SessionEvent[]): Promise<void> {
    // A socket we ended (restart, logout, stop) may still flush; its news no longer describes us.
    if (generation !== slot.generation) return;
    const events = this.o.receiveStatus ? reported : withoutBroadcasts(reported);
    if (events.length === 0) return;
    for (const event of events) {
      if (event.type === 'SessionConnected') {
        slot.open = true;
        slot.paired = true;
        slot.attempt = 0;
        slot.qr = null;
      }
    }
    await this.record(slot, events);
    // Once stored, as the read model would learn it, so the two never disagree about the past.
    for (const event of events) slot.status = foldLiveStatus(slot.status, event);
    if (events.some((e) => e.type === 'SessionConnected')) {
      slot.announced = true;
      this.settleOpenWaiters(slot, slot.open);
    }
    // Not awaited: marking read is a network call of its own, and waiting for it here would hold
    // the driver's event delivery (two auto-reading instances messaging each other would deadlock).
    void this.autoRead(slot, generation, events);
  }

  private async autoRead(slot: Slot, generation: number, events: SessionEvent[]): Promise<void> {
    const incoming = events.flatMap((e) => (e.type === 'MessageReceived' && e.data.upsert === 'notify' && !e.data.message.from_me ? [e.data.message] : []));
    if (incoming.length === 0) return;
    try {
      const instance = await this.o.instances.byId(slot.instanceId);
      if (!instance?.auto_read_messages) return;
      // One read per chat (and group sender: the network's read receipt names one), as a phone would.
      const batches = new Map<string, { chat: string; sender?: string; ids: string[] }>();
      for (const m of incoming) {
        const sender = m.is_group ? m.sender : undefined;
        const key = `${m.chat} ${sender ?? ''}`;
        const batch = batches.get(key) ?? { chat: m.chat, ...(sender === undefined ? {} : { sender }), ids: [] };
        batch.ids.push(m.id);
        batches.set(key, batch);
      }
      for (const { chat, sender, ids } of batches.values()) {
        const connection = generation === slot.generation && slot.open ? slot.connection : null;
        if (!connection) return;
        await connection.markRead(chat, ids, sender);
        // As chat/markread does: the account read them itself, which the chat list and webhooks show.
        const now = Math.floor((this.o.clock ?? systemClock).now().getTime() / 1000);
        await this.record(slot, [
          { type: 'ReceiptReceived', data: { message_ids: ids, chat, sender: slot.status.jid ?? chat, state: 'ReadSelf', timestamp_s: now } },
        ]);
      }
    } catch (err) {
      this.o.logger.warn({ err, instanceId: slot.instanceId }, 'auto-read failed');
    }
  }

  private async onCall(slot: Slot, generation: number, call: { id: string; from: string }): Promise<void> {
    const instance = await this.o.instances.byId(slot.instanceId);
    if (!instance?.reject_calls || generation !== slot.generation || !slot.connection) return;
    try {
      await slot.connection.rejectCall(call.id, call.from);
      await this.record(slot, [{ type: 'CallRejected', data: { call_id: call.id, from: call.from } }]);
    } catch (err) {
      this.o.logger.warn({ err, instanceId: slot.instanceId }, 'call rejection failed');
    }
  }

  private onQr(slot: Slot, generation: number, qr: string): void {
    if (generation !== slot.generation) return;
    slot.qr = qr;
    const waiters = slot.qrWaiters;
    slot.qrWaiters = [];
    for (const w of waiters) w.resolve(qr);
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

  private onCloseNow(slot: Slot, { reason, statusCode, message = STOP_MESSAGES[reason] }: NetworkClose): void {
    const wasOpen = slot.open;
    slot.connection = null;
    slot.open = false;
    slot.qr = null;
    slot.attempt += 1;
    const decision = decideReconnect(reason, slot.attempt, this.random(), this.backoff);
    const wipe = decision.action === 'wipe';
    const events: SessionEvent[] = [];
    if (wipe && slot.paired) {
      // One event, not Disconnected then LoggedOut: it says both, and integrators get one Disconnected webhook.
      events.push({ type: 'SessionLoggedOut', data: { by: 'phone' } });
    } else if (wasOpen || slot.announced || (decision.action !== 'reconnect' && slot.paired)) {
      events.push({
        type: 'SessionDisconnected',
        data: { reason, ...(statusCode === undefined ? {} : { status_code: statusCode }), ...(message === undefined ? {} : { message }) },
      });
    }
    if (events.length > 0) slot.announced = false;
    if (wipe) slot.paired = false;
    // The wipe comes first: a LoggedOut in the log always means the credentials are gone.
    const cleared = wipe ? this.o.authState(slot.instanceId).clear() : Promise.resolve();
    void cleared
      .then(() => this.record(slot, events))
      .catch((err: unknown) => this.o.logger.error({ err, instanceId: slot.instanceId }, 'recording a disconnect failed'));

    // An unpaired socket that closes (QR expired) is not worth re-opening until asked again.
    if (decision.action === 'reconnect' && (slot.paired || reason === 'restart_required')) {
      // A restart waiting on this session keeps waiting only through an immediate reconnect.
      if (decision.delayMs > 0) this.settleOpenWaiters(slot, false);
      slot.timer = setTimeout(() => void this.connect(slot), decision.delayMs);
      slot.timer.unref();
    } else {
      void this.park(slot);
    }
  }

  /** One slot's records go in order: a disconnect is never stored after the reconnect it caused. */
  private record(slot: Slot, events: SessionEvent[]): Promise<bigint | null> {
    const done = slot.recording.then(() => this.o.recorder.record(slot.instanceId, slot.accountId, events));
    slot.recording = done.catch(() => null);
    return done;
  }
}

/**
 * One call to the network, its failure said in the API's terms: not connected is 409
 * not_connected, anything else the network threw is 502; the driver's own DomainErrors (an unknown
 * address, a bad argument) pass through.
 */
export async function networkCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof DomainError) throw err;
    if (err instanceof NotConnectedError) throw new DomainError('not_connected', 'the instance is not connected');
    throw new DomainError('upstream_failed', `the network refused the request: ${(err as Error).message}`);
  }
}
