import { conflict } from '../../domain/errors.js';
import type { SessionEvent } from '../../domain/session/events.js';
import type { DeliverOptions, SandboxConnection } from './connection.js';

/**
 * The live connections of this process: by instance, by the phone they are linked to, and by the
 * pairing material (QR strings, pairing codes) they are waiting on. In memory on purpose: a
 * restart drops sockets, and connect() restores linked ones from their credentials.
 */
export class Registry {
  private readonly byInstance = new Map<string, SandboxConnection>();
  private readonly byPhone = new Map<string, SandboxConnection>();
  private readonly qrs = new Map<string, SandboxConnection>();
  private readonly codes = new Map<string, { conn: SandboxConnection; phone: string }>();
  private readonly reserved = new Set<string>();

  /** A new connection of an instance replaces (and silences) the one it had. */
  open(conn: SandboxConnection): void {
    const previous = this.byInstance.get(conn.instanceId);
    if (previous) {
      this.forget(previous);
      previous.silence();
    }
    this.byInstance.set(conn.instanceId, conn);
  }

  offerQr(conn: SandboxConnection, qr: string): void {
    this.qrs.set(qr, conn);
  }

  byQr(qr: string): SandboxConnection | undefined {
    return this.qrs.get(qr);
  }

  offerCode(conn: SandboxConnection, phone: string, code: string): void {
    this.codes.set(code, { conn, phone });
  }

  byCode(code: string): { conn: SandboxConnection; phone: string } | undefined {
    return this.codes.get(code);
  }

  /** The connected instance linked to this phone. */
  connectedFor(phone: string): SandboxConnection | undefined {
    const conn = this.byPhone.get(phone);
    return conn?.state === 'connected' ? conn : undefined;
  }

  connected(): SandboxConnection[] {
    return [...this.byPhone.values()].filter((c) => c.state === 'connected');
  }

  /** Holds a phone while it pairs, so two instances cannot both take it. Returns the release. */
  reserve(phone: string, conn: SandboxConnection): () => void {
    const holder = this.connectedFor(phone);
    if (this.reserved.has(phone) || (holder && holder !== conn)) throw conflict(`phone ${phone} is linked to another connected instance`);
    this.reserved.add(phone);
    return () => this.reserved.delete(phone);
  }

  markConnected(conn: SandboxConnection, phone: string): void {
    this.forgetPairing(conn);
    conn.state = 'connected';
    conn.phone = phone;
    this.byPhone.set(phone, conn);
  }

  forget(conn: SandboxConnection): void {
    this.forgetPairing(conn);
    if (conn.phone !== undefined && this.byPhone.get(conn.phone) === conn) this.byPhone.delete(conn.phone);
    if (this.byInstance.get(conn.instanceId) === conn) this.byInstance.delete(conn.instanceId);
  }

  /** Delivers to the phone's connected instance, if any. */
  async toPhone(phone: string, events: SessionEvent[], options?: DeliverOptions): Promise<void> {
    const conn = this.connectedFor(phone);
    if (conn && events.length > 0) await conn.deliver(events, options);
  }

  private forgetPairing(conn: SandboxConnection): void {
    for (const [qr, c] of this.qrs) if (c === conn) this.qrs.delete(qr);
    for (const [code, entry] of this.codes) if (entry.conn === conn) this.codes.delete(code);
  }
}
