import { invalidInput, notFound } from '../../domain/errors.js';
import type { SessionEvent } from '../../domain/session/events.js';
import type { Clock } from '../../infra/clock.js';
import { unixSeconds, type Address } from './addresses.js';
import type { SandboxConnection } from './connection.js';
import type { Conversations } from './conversations.js';
import { isMember, type Groups } from './groups.js';
import { deliverAll } from './messaging.js';
import type { Phones } from './phones.js';
import type { Registry } from './registry.js';
import type { MessageDoc, PhoneDoc } from './state.js';

type ReceiptState = 'Delivered' | 'Read';

/** Receipts and presence: what phones tell the senders and contacts' instances. */
export class Signals {
  constructor(
    private readonly phones: Phones,
    private readonly groups: Groups,
    private readonly conversations: Conversations,
    private readonly registry: Registry,
    private readonly clock: Clock,
  ) {}

  /** The phone acknowledges messages it received; every id must be one of them. */
  async receipts(reader: PhoneDoc, ids: string[], state: ReceiptState): Promise<void> {
    const messages = await this.conversations.received(reader._id, ids);
    const unknown = ids.find((id) => !messages.some((m) => m._id === id));
    if (unknown !== undefined) throw invalidInput('message_ids', `${unknown} is not a message this phone received`);
    await this.acknowledge(reader, messages, state);
  }

  /** The linked instance reads messages; ids it never received are ignored, as the network does. */
  async markRead(reader: PhoneDoc, chat: Address, ids: string[]): Promise<void> {
    const messages = await this.conversations.received(reader._id, ids);
    await this.acknowledge(reader, messages.filter((m) => inChat(m, chat)), 'Read');
  }

  /** The paired account reads a chat on the phone: its own instance sees ReadSelf, senders see Read. */
  async readSelf(reader: PhoneDoc, chat: Address): Promise<void> {
    await this.requireChat(reader, chat, 'chat');
    const received = await this.conversations.receivedIn(reader._id, chat);
    const last = received[received.length - 1];
    if (!last) return;
    const unread = received.filter((m) => !m.read_by.includes(reader._id));
    const ids = unread.length > 0 ? unread.map((m) => m._id) : [last._id];
    await this.conversations.mark(reader._id, ids, 'Read');
    await this.registry.toPhone(reader._id, [
      {
        type: 'ReceiptReceived',
        data: { message_ids: ids, chat: chat.jid, sender: reader.jid, state: 'ReadSelf', timestamp_s: this.now() },
      },
    ]);
    await this.notifySenders(reader, unread, 'Read');
  }

  /** Instances whose phone knows this one (a contact, or a conversation) see its presence. */
  async presence(phone: PhoneDoc, state: 'available' | 'unavailable'): Promise<void> {
    const data = { jid: phone.jid, state, ...(state === 'unavailable' ? { last_seen_s: this.now() } : {}) };
    const deliveries: [SandboxConnection, SessionEvent][] = [];
    for (const conn of this.registry.connected()) {
      if (conn.phone === undefined || conn.phone === phone._id || conn.accountId !== phone.account_id) continue;
      const viewer = (await this.phones.byIds([conn.phone])).get(conn.phone);
      const knows = viewer?.contacts.includes(phone._id) || (await this.conversations.haveTalked(conn.phone, phone._id));
      if (knows) deliveries.push([conn, { type: 'PresenceUpdated', data }]);
    }
    await deliverAll(deliveries);
  }

  async chatPresence(sender: PhoneDoc, to: Address, state: 'composing' | 'recording' | 'paused'): Promise<void> {
    await this.requireChat(sender, to, 'to');
    const targets = to.kind === 'phone' ? [to.phone] : (await this.groups.owned(sender.account_id, to.jid, 'to')).participants.map((p) => p.phone);
    const chat = to.kind === 'phone' ? sender.jid : to.jid;
    const event: SessionEvent = { type: 'ChatPresenceUpdated', data: { chat, sender: sender.jid, state } };
    const deliveries: [SandboxConnection, SessionEvent][] = [];
    for (const phone of targets) {
      const conn = phone === sender._id ? undefined : this.registry.connectedFor(phone);
      if (conn) deliveries.push([conn, event]);
    }
    await deliverAll(deliveries);
  }

  private async acknowledge(reader: PhoneDoc, messages: MessageDoc[], state: ReceiptState): Promise<void> {
    await this.conversations.mark(reader._id, messages.map((m) => m._id), state);
    await this.notifySenders(reader, messages, state);
  }

  /** One receipt per sender and chat, as the network batches them. */
  private async notifySenders(reader: PhoneDoc, messages: MessageDoc[], state: ReceiptState): Promise<void> {
    const batches = new Map<string, { from: string; chat: string; ids: string[] }>();
    for (const m of messages) {
      const chat = m.group ?? reader.jid;
      const key = `${m.from} ${chat}`;
      const batch = batches.get(key) ?? { from: m.from, chat, ids: [] };
      batch.ids.push(m._id);
      batches.set(key, batch);
    }
    const deliveries: [SandboxConnection, SessionEvent][] = [];
    for (const { from, chat, ids } of batches.values()) {
      const conn = this.registry.connectedFor(from);
      const data = { message_ids: ids, chat, sender: reader.jid, state, timestamp_s: this.now() };
      if (conn) deliveries.push([conn, { type: 'ReceiptReceived', data }]);
    }
    await deliverAll(deliveries);
  }

  /** The other party exists in the same account, or the group does and the phone is in it. */
  private async requireChat(phone: PhoneDoc, chat: Address, field: string): Promise<void> {
    if (chat.kind === 'phone') {
      if (chat.phone === phone._id) throw invalidInput(field, 'must be another phone');
      const other = (await this.phones.byIds([chat.phone])).get(chat.phone);
      if (!other || other.account_id !== phone.account_id) throw notFound(`sandbox phone ${chat.phone} not found`);
      return;
    }
    const group = await this.groups.owned(phone.account_id, chat.jid, field);
    if (!isMember(group, phone._id)) throw invalidInput(field, 'the phone is not a member of the group');
  }

  private now(): number {
    return unixSeconds(this.clock.now());
  }
}

const inChat = (m: MessageDoc, chat: Address) => (chat.kind === 'group' ? m.group === chat.jid : m.group === undefined && m.from === chat.phone);
