import type { Logger } from 'pino';
import { conflict, DomainError } from '../domain/errors.js';
import type { DisconnectReason, SessionEvent } from '../domain/session/events.js';
import type { InstanceQueries } from '../projections/instances/instance-queries.js';
import type { SessionQueries } from '../projections/sessions/session-queries.js';
import type { AuthStateStore, MessagingNetwork, NetworkConnection } from './port.js';
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
  backoff?: BackoffSettings;
  random?: () => number;
  /** How long a pairing request waits for the network's first QR. */
  qrTimeoutMs?: number;
}

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
  qr: string | null;
  qrWaiters: ((qr: string) => void)[];
  attempt: number;
  timer: NodeJS.Timeout | null;
  connecting: Promise<void> | null;
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
    for (const instanceId of await this.o.sessions.paired()) {
      const instance = await this.o.instances.byId(instanceId);
      if (!instance || instance.billing_status === 'CANCELED') continue;
      const slot = this.slotFor(instanceId, instance.account_id, true);
      void this.connect(slot);
    }
  }

  async shutdown(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.slots.values()].map((slot) => this.halt(slot)));
    this.slots.clear();
  }

  /** The connected account's own jid, for receipts the account itself causes. */
  async selfJid(instanceId: string): Promise<string | null> {
    return (await this.o.sessions.status(instanceId))?.jid ?? null;
  }

  isConnected(instanceId: string): boolean {
    return this.slots.get(instanceId)?.open ?? false;
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
      const waiter = (qr: string) => {
        clearTimeout(timer);
        resolve(qr);
      };
      slot.qrWaiters.push(waiter);
    });
  }

  async pairCode(instanceId: string, accountId: string, phone: string): Promise<string> {
    const slot = await this.pairingSlot(instanceId, accountId, 'code');
    if (!slot.connection) throw new DomainError('upstream_failed', 'the network connection could not be opened; retry');
    return this.translate(() => slot.connection!.requestPairingCode(phone));
  }

  /** Unpairs: unlinks on the network when connected, wipes the credentials, records it. */
  async logout(instanceId: string, accountId: string): Promise<bigint | null> {
    const slot = this.slots.get(instanceId);
    const status = await this.o.sessions.status(instanceId);
    const paired = slot?.paired || status?.paired === true;
    if (slot) {
      if (slot.open && slot.connection) {
        await slot.connection.logout().catch((err: unknown) => this.o.logger.warn({ err, instanceId }, 'network logout failed'));
      }
      await this.halt(slot);
      this.slots.delete(instanceId);
    }
    await this.o.authState(instanceId).clear();
    if (!paired) return null;
    return this.o.recorder.record(instanceId, accountId, [{ type: 'SessionLoggedOut', data: { by: 'user' } }]);
  }

  /** Drops the connection and opens a new one. Answers whether it is connected right after. */
  async restart(instanceId: string, accountId: string): Promise<boolean> {
    const status = await this.o.sessions.status(instanceId);
    const existing = this.slots.get(instanceId);
    if (existing) await this.halt(existing);
    const slot = this.slotFor(instanceId, accountId, existing?.paired || status?.paired === true);
    await this.connect(slot);
    return slot.open;
  }

  /** Closes the session without unpairing (the instance was canceled). */
  async stop(instanceId: string): Promise<void> {
    const slot = this.slots.get(instanceId);
    if (!slot) return;
    await this.halt(slot);
    this.slots.delete(instanceId);
  }

  private async pairingSlot(instanceId: string, accountId: string, method: 'qr' | 'code'): Promise<Slot> {
    const existing = this.slots.get(instanceId);
    if (existing?.open) throw conflict('the instance is already connected');
    if (existing && (existing.connection || existing.connecting)) {
      await existing.connecting;
      return existing;
    }
    const slot = existing ?? this.slotFor(instanceId, accountId, false);
    await this.o.recorder.record(instanceId, accountId, [{ type: 'SessionPairingStarted', data: { method } }]);
    await this.connect(slot);
    if (slot.open) throw conflict('the instance is already connected');
    return slot;
  }

  private slotFor(instanceId: string, accountId: string, paired: boolean): Slot {
    const slot: Slot = {
      instanceId,
      accountId,
      connection: null,
      generation: 0,
      open: false,
      paired,
      qr: null,
      qrWaiters: [],
      attempt: 0,
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
        const connection = await this.o.network.connect({
          instanceId: slot.instanceId,
          accountId: slot.accountId,
          auth: this.o.authState(slot.instanceId),
          handlers: {
            onEvents: (events) => this.onEvents(slot, events),
            onQr: (qr) => this.onQr(slot, generation, qr),
            onClose: (close) => this.onClose(slot, generation, close.reason, close.statusCode),
            onCall: (call) => void this.onCall(slot, call),
          },
        });
        if (generation === slot.generation) slot.connection = connection;
        else await connection.end();
      } catch (err) {
        this.o.logger.warn({ err, instanceId: slot.instanceId }, 'connect failed');
        if (generation === slot.generation) this.onClose(slot, generation, 'unknown');
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

  private async onEvents(slot: Slot, events: SessionEvent[]): Promise<void> {
    for (const event of events) {
      if (event.type === 'SessionConnected') {
        slot.open = true;
        slot.paired = true;
        slot.attempt = 0;
        slot.qr = null;
      }
    }
    await this.o.recorder.record(slot.instanceId, slot.accountId, events);
    await this.autoRead(slot, events);
  }

  private async autoRead(slot: Slot, events: SessionEvent[]): Promise<void> {
    const incoming = events.flatMap((e) => (e.type === 'MessageReceived' && e.data.upsert === 'notify' && !e.data.message.from_me ? [e.data.message] : []));
    if (incoming.length === 0 || !slot.connection) return;
    const instance = await this.o.instances.byId(slot.instanceId);
    if (!instance?.auto_read_messages) return;
    for (const m of incoming) {
      await slot.connection.markRead(m.chat, [m.id], m.is_group ? m.sender : undefined).catch((err: unknown) => {
        this.o.logger.warn({ err, instanceId: slot.instanceId }, 'auto-read failed');
      });
    }
  }

  private async onCall(slot: Slot, call: { id: string; from: string }): Promise<void> {
    const instance = await this.o.instances.byId(slot.instanceId);
    if (!instance?.reject_calls || !slot.connection) return;
    try {
      await slot.connection.rejectCall(call.id, call.from);
      await this.o.recorder.record(slot.instanceId, slot.accountId, [{ type: 'CallRejected', data: { call_id: call.id, from: call.from } }]);
    } catch (err) {
      this.o.logger.warn({ err, instanceId: slot.instanceId }, 'call rejection failed');
    }
  }

  private onQr(slot: Slot, generation: number, qr: string): void {
    if (generation !== slot.generation) return;
    slot.qr = qr;
    const waiters = slot.qrWaiters;
    slot.qrWaiters = [];
    for (const w of waiters) w(qr);
  }

  private onClose(slot: Slot, generation: number, reason: DisconnectReason, statusCode?: number): void {
    if (generation !== slot.generation || this.closed) return;
    const wasOpen = slot.open;
    slot.connection = null;
    slot.open = false;
    slot.qr = null;
    slot.attempt += 1;
    const decision = decideReconnect(reason, slot.attempt, this.random(), this.backoff);
    // An unpaired socket that closes (QR expired) is not worth re-opening until asked again.
    const give_up = decision.action === 'reconnect' && !slot.paired && reason !== 'restart_required';
    const events: SessionEvent[] = [];
    if (wasOpen || decision.action !== 'reconnect') {
      events.push({ type: 'SessionDisconnected', data: statusCode === undefined ? { reason } : { reason, status_code: statusCode } });
    }
    void (async () => {
      if (decision.action === 'wipe') {
        await this.o.authState(slot.instanceId).clear();
        events.push({ type: 'SessionLoggedOut', data: { by: 'phone' } });
      }
      await this.o.recorder.record(slot.instanceId, slot.accountId, events);
    })().catch((err: unknown) => this.o.logger.error({ err, instanceId: slot.instanceId }, 'recording a disconnect failed'));

    if (decision.action === 'reconnect' && !give_up) {
      slot.timer = setTimeout(() => void this.connect(slot), decision.delayMs);
      slot.timer.unref();
    } else {
      this.slots.delete(slot.instanceId);
    }
  }

  /** Driver failures become HTTP-meaningful errors; domain errors pass through. */
  private async translate<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      if (err instanceof DomainError) throw err;
      if (err instanceof NotConnectedError) throw new DomainError('not_connected', 'the instance is not connected');
      throw new DomainError('upstream_failed', `the network refused the request: ${(err as Error).message}`);
    }
  }
}
