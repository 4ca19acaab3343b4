import { conflict, invalidInput, notFound } from '../../domain/errors.js';
import type { SessionEvent } from '../../domain/session/events.js';
import type { Clock } from '../../infra/clock.js';
import type { IdGenerator } from '../../infra/ids.js';
import { NotConnectedError } from '../port.js';
import { isPhone, requirePhone } from './addresses.js';
import type { SandboxConnection } from './connection.js';
import type { Conversations } from './conversations.js';
import type { Groups } from './groups.js';
import { historySync } from './history.js';
import { profileFields, type Phones } from './phones.js';
import type { Registry } from './registry.js';
import type { OfflineMessages } from './offline.js';
import { accountSync } from './far-end.js';
import { DURABLE, type PhoneDoc, type SandboxState } from './state.js';
import { groupInfo } from './views.js';

/** The real network's answer to credentials it no longer knows. */
const LOGGED_OUT = { reason: 'logged_out', statusCode: 401 } as const;
const normalizeCode = (code: string) => code.toUpperCase().replace(/[^A-Z0-9]/g, '');

/**
 * Linking instances and phones: QR strings and pairing codes, the link kept on both sides (the
 * instance's credentials and the sandbox's own record), restoring it on reconnect, and unlinking.
 */
export class Pairing {
  constructor(
    private readonly state: SandboxState,
    private readonly phones: Phones,
    private readonly groups: Groups,
    private readonly conversations: Conversations,
    private readonly registry: Registry,
    private readonly ids: IdGenerator,
    private readonly clock: Clock,
    private readonly offline: OfflineMessages,
  ) {}

  /** connect(): linked credentials reconnect at once (no history again); none show a QR. */
  async start(conn: SandboxConnection): Promise<void> {
    const linked = await this.credentialPhone(conn);
    if (linked === undefined) {
      // Names the instance, so that with many nodes a scan on any node reaches the one showing it.
      const qr = `sandbox:${conn.instanceId}~${this.ids.alphanumeric(32)}`;
      this.registry.offerQr(conn, qr);
      conn.showQr(qr);
      return;
    }
    const link = await this.state.links.findOne({ _id: conn.instanceId });
    const phone = link?.phone === linked ? (await this.phones.byIds([linked])).get(linked) : undefined;
    if (!phone || phone.account_id !== conn.accountId) {
      // The phone unlinked this device while it was away: its credentials are dead.
      this.registry.forget(conn);
      void conn.close(LOGGED_OUT, { defer: true }).catch(() => undefined);
      return;
    }
    this.registry.markConnected(conn, phone._id);
    conn.deliver(connectedEvents(phone), { defer: true }).catch(() => {
      // The manager could not store Connected: drop the socket so that it reconnects and retries.
      this.registry.forget(conn);
      void conn.close({ reason: 'unknown' }).catch(() => undefined);
    });
    // What arrived while the account was away follows Connected; kept until it was taken.
    this.offline.handOver(conn, phone).catch(() => undefined);
  }

  async requestCode(conn: SandboxConnection, phone: string): Promise<string> {
    if (conn.state === 'closed') throw new NotConnectedError('the sandbox connection is closed');
    if (conn.state !== 'pairing') throw conflict('the instance is already linked');
    const digits = requirePhone('phone', phone);
    const doc = (await this.phones.byIds([digits])).get(digits);
    if (!doc || doc.account_id !== conn.accountId) throw notFound(`sandbox phone ${digits} not found`);
    const raw = this.ids.alphanumeric(8);
    this.registry.offerCode(conn, digits, raw);
    return `${raw.slice(0, 4)}-${raw.slice(4)}`;
  }

  async scan(accountId: string, phone: PhoneDoc, qr: string): Promise<void> {
    const conn = this.registry.byQr(qr);
    if (!conn || conn.accountId !== accountId || conn.state !== 'pairing') throw notFound('unknown or expired QR code');
    await this.pair(conn, phone);
  }

  async link(accountId: string, phone: PhoneDoc, code: string): Promise<void> {
    const entry = this.registry.byCode(normalizeCode(code));
    if (!entry || entry.conn.accountId !== accountId || entry.conn.state !== 'pairing') throw notFound('unknown or expired pairing code');
    if (entry.phone !== phone._id) throw invalidInput('code', 'was requested for another phone');
    await this.pair(entry.conn, phone);
  }

  /** The phone removes its linked device; that instance's socket closes as logged out. */
  async unlink(phone: PhoneDoc): Promise<void> {
    await this.state.links.deleteMany({ phone: phone._id }, DURABLE);
    const conn = this.registry.connectedFor(phone._id);
    if (!conn) return;
    this.registry.forget(conn);
    await conn.close(LOGGED_OUT);
  }

  /** The instance logs out: the link goes, the manager records it and wipes the credentials. */
  async logout(conn: SandboxConnection): Promise<void> {
    if (conn.state === 'connected') await this.state.links.deleteMany({ _id: conn.instanceId }, DURABLE);
    this.registry.forget(conn);
    // Closed, not silenced: what is already queued still reaches the manager.
    conn.state = 'closed';
  }

  private async pair(conn: SandboxConnection, phone: PhoneDoc): Promise<void> {
    const release = this.registry.reserve(phone._id, conn);
    conn.state = 'linking';
    let events: SessionEvent[];
    try {
      await conn.auth.set({ creds: { creds: { phone: phone._id } } });
      const links = this.state.links.name;
      await this.state.docs.batch(
        [
          { collection: links, op: 'deleteMany', filter: { $or: [{ phone: phone._id }, { _id: conn.instanceId }] } },
          { collection: links, op: 'insertOne', doc: { _id: conn.instanceId, phone: phone._id, account_id: phone.account_id, linked_at: this.clock.now().toISOString() } },
          // A new link gets the past by history sync: nothing kept offline is handed over again.
          { collection: this.state.messages.name, op: 'updateMany', filter: { offline_for: phone._id }, update: { $pull: { offline_for: phone._id } } },
        ],
        DURABLE,
      );
      const groups = await this.groups.ofMember(phone._id);
      const history = await historySync(phone, groups, this.conversations, this.phones);
      events = [...connectedEvents(phone), { type: 'HistorySyncReceived', data: history }];
      if (groups.length > 0) events.push({ type: 'GroupsUpserted', data: { groups: groups.map(groupInfo) } });
      events.push(...(await accountSync(phone, this.phones)));
    } catch (error) {
      if (conn.state === 'linking') conn.state = 'pairing';
      throw error;
    } finally {
      release();
    }
    // The instance went away while linking; its credentials reconnect it later.
    if (conn.state !== 'linking') return;
    // Marked and queued in the same turn: any message after this point follows the history.
    this.registry.markConnected(conn, phone._id);
    await conn.deliver(events);
  }

  private async credentialPhone(conn: SandboxConnection): Promise<string | undefined> {
    const { creds } = await conn.auth.get('creds', ['creds']);
    const phone = creds !== null && typeof creds === 'object' ? (creds as { phone?: unknown }).phone : undefined;
    return isPhone(phone) ? phone : undefined;
  }
}

export function connectedEvents(phone: PhoneDoc): SessionEvent[] {
  return [
    { type: 'SessionConnected', data: { jid: phone.jid, phone: phone._id, push_name: phone.push_name, business: phone.business !== undefined } },
    { type: 'ProfileUpdated', data: profileFields(phone) },
  ];
}
