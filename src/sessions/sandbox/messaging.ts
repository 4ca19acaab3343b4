import { DomainError, invalidInput, notFound } from '../../domain/errors.js';
import type { SessionEvent } from '../../domain/session/events.js';
import type { Clock } from '../../infra/clock.js';
import type { IdGenerator } from '../../infra/ids.js';
import { unixSeconds, type Address } from './addresses.js';
import type { SandboxConnection } from './connection.js';
import type { Conversations } from './conversations.js';
import type { Groups } from './groups.js';
import type { Phones } from './phones.js';
import type { Registry } from './registry.js';
import { DURABLE, type MessageDoc, type PhoneDoc, type SandboxState } from './state.js';
import { networkMessage, type SenderIdentity } from './views.js';
import type { OfflineMessages } from './offline.js';

/**
 * How recipients see the sender: by LID in groups (always) and in 1:1 chats when the sender uses
 * privacy addressing; plain phone-number addressing otherwise.
 */
export function identityOf(sender: PhoneDoc, inGroup: boolean): SenderIdentity | undefined {
  if (!sender.lid) return undefined;
  const addressing = sender.addressing ?? 'pn';
  return inGroup || addressing === 'lid' ? { lid: sender.lid, addressing } : undefined;
}

/** Where a message goes, checked before anything is stored (or any media uploaded). */
export interface Route {
  recipients: string[];
  group?: string;
  replyTo?: string;
}

export type Content = Pick<
  MessageDoc,
  'type' | 'text' | 'media' | 'reaction' | 'buttons' | 'location' | 'contacts' | 'poll' | 'edit' | 'revoke' | 'lid_only' | 'poll_vote' | 'list' | 'mentions' | 'view_once' | 'forwarded' | 'link_preview'
>;

/** Who sends: the phone itself (its linked instance sees MessageSent from the device), or an instance. */
export type Origin = 'phone' | 'instance';

/** Stores messages and hands each to the connected instances of its recipients. */
export class Messaging {
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

  async route(sender: PhoneDoc, to: Address, field: string, replyTo?: string): Promise<Route> {
    const route = await this.recipients(sender, to, field);
    if (replyTo !== undefined) {
      if (!(await this.conversations.known(sender._id, replyTo))) throw invalidInput('reply_to', 'is not a message of this phone');
      route.replyTo = replyTo;
    }
    return route;
  }

  /** A message this phone sent under `id`, if any. */
  sentBy(sender: PhoneDoc, id: string): Promise<MessageDoc | null> {
    return this.state.messages.findOne({ _id: id, from: sender._id });
  }

  async send(sender: PhoneDoc, route: Route, content: Content, origin: Origin, id?: string): Promise<MessageDoc> {
    const now = this.clock.now();
    const message: MessageDoc = {
      // The shape of WhatsApp Web's ids, so integrators' parsers meet what they will meet live.
      _id: id ?? `3EB0${this.ids.alphanumeric(16)}`,
      account_id: sender.account_id,
      seq: await this.state.nextSeq(),
      from: sender._id,
      push_name: sender.push_name,
      recipients: route.recipients,
      timestamp_s: unixSeconds(now),
      sent_at: now.toISOString(),
      delivered_to: [],
      read_by: [],
      ...definedOnly(content),
    };
    if (route.group !== undefined) message.group = route.group;
    if (route.replyTo !== undefined) message.reply_to = route.replyTo;
    // Readable before any instance hears of it (an instance may mark it read at once); on disk
    // by the time the sender is answered, its fsync running while the instances store their events.
    // An OS crash in between (a process crash keeps a commit: the kernel has it) could leave an
    // instance with a message the simulated network forgot; the sender was not answered then, and
    // the gateway's own record, the instance's event, is the one that must survive.
    await this.conversations.append(message);
    await Promise.all([this.state.docs.flush(), this.fanOut(message, origin, identityOf(sender, route.group !== undefined))]);
    return message;
  }

  private async recipients(sender: PhoneDoc, to: Address, field: string): Promise<Route> {
    if (to.kind === 'phone') {
      if (to.phone === sender._id) throw invalidInput(field, 'a phone cannot message itself in the sandbox');
      const target = (await this.phones.byIds([to.phone])).get(to.phone);
      if (!target || target.account_id !== sender.account_id) throw notFound(`sandbox phone ${to.phone} not found`);
      // The network takes a message to someone who blocked the sender and never hands it over
      // (the sender sees it sent, no more): kept on the sender's side, with nobody to reach.
      if (target.blocked?.includes(sender._id)) return { recipients: [] };
      return { recipients: [to.phone] };
    }
    const group = await this.groups.owned(sender.account_id, to.jid, field);
    const self = group.participants.find((p) => p.phone === sender._id);
    if (!self) throw invalidInput(field, 'the sender is not a member of the group');
    if (group.announce && !self.is_admin) throw new DomainError('forbidden', 'only admins send to an announcement group');
    return { recipients: group.participants.map((p) => p.phone).filter((p) => p !== sender._id), group: group._id };
  }

  private async fanOut(message: MessageDoc, origin: Origin, sender: SenderIdentity | undefined): Promise<void> {
    const received: [string, SandboxConnection][] = [];
    const offline: string[] = [];
    for (const phone of message.recipients) {
      const conn = this.registry.connectedFor(phone);
      if (conn) received.push([phone, conn]);
      else offline.push(phone);
    }
    // Kept before the sender is answered: a session that connects after the answer finds it.
    await this.offline.keep(message._id, offline);
    const own = origin === 'phone' ? this.registry.connectedFor(message.from) : undefined;
    for (const [phone, conn] of received) {
      // A connection ended before the message's turn (its session moved to another node) did not take it: kept for the next.
      const taken = await conn.deliverTaken([{ type: 'MessageReceived', data: { message: networkMessage(message, phone, sender), upsert: 'notify' } }]);
      if (!taken) await this.offline.keep(message._id, [phone]);
    }
    if (own) await deliverAll([[own, { type: 'MessageSent', data: { message: networkMessage(message, message.from), origin: 'device' } }]]);
  }
}

/**
 * One connection after another, each awaited: the caller's request fails if an instance could not
 * take its event. (The sender's own instance is never among them for an instance-sent message, so
 * an instance acting from inside its event handler does not wait on itself.)
 */
export async function deliverAll(deliveries: [SandboxConnection, SessionEvent][]): Promise<void> {
  for (const [conn, event] of deliveries) await conn.deliver([event]);
}

function definedOnly<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
