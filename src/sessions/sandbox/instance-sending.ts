import { DomainError, invalidInput, notFound } from '../../domain/errors.js';
import type { NetworkMessage, SessionEvent } from '../../domain/session/events.js';
import type { MessageChange, OutgoingContent } from '../../domain/session/outgoing.js';
import type { Clock } from '../../infra/clock.js';
import type { IdGenerator } from '../../infra/ids.js';
import { NotConnectedError, type MediaUpload, type MessageAuthor, type SentMessage, type UploadedMedia } from '../port.js';
import { parseAddress, unixSeconds, userJid, type Address } from './addresses.js';
import type { SandboxConnection } from './connection.js';
import type { Conversations } from './conversations.js';
import type { Groups } from './groups.js';
import type { MediaStore } from './media-store.js';
import { deliverAll, type Content, type Messaging } from './messaging.js';
import type { Numbers } from './numbers.js';
import type { Phones } from './phones.js';
import type { Registry } from './registry.js';
import { DURABLE, type MessageDoc, type PhoneDoc, type SandboxState } from './state.js';
import { chatOf, networkMessage } from './views.js';

/** The network's answer to a send it took and then refused: a restricted account or recipient. */
const RESTRICTED = { code: 463, reason: 'the recipient cannot be reached: the account is restricted' };

/**
 * Everything a linked instance sends on the sandbox beyond text and buttons (SANDBOX.md, "What
 * phones see of what instances do"): media uploaded to the sandbox's host as the network does,
 * every message kind, edits and deletions for everyone, chat presence, and the refusal a
 * restricted phone's sends meet. Addresses may be phones, user jids, group jids or LIDs.
 */
export class InstanceSending {
  constructor(
    private readonly state: SandboxState,
    private readonly phones: Phones,
    private readonly groups: Groups,
    private readonly conversations: Conversations,
    private readonly messaging: Messaging,
    private readonly numbers: Numbers,
    private readonly media: MediaStore,
    private readonly registry: Registry,
    private readonly ids: IdGenerator,
    private readonly clock: Clock,
  ) {}

  async uploadMedia(conn: SandboxConnection, file: MediaUpload): Promise<UploadedMedia> {
    const me = await this.me(conn);
    return this.media.uploadFile(me.account_id, file);
  }

  async send(conn: SandboxConnection, to: string, content: OutgoingContent, messageId?: string): Promise<SentMessage> {
    const me = await this.me(conn);
    const address = await this.address(me, to);
    const replyTo = content.kind === 'forward' ? undefined : content.reply_to;
    const route = await this.messaging.route(me, address, 'phone', replyTo);
    if (messageId !== undefined) {
      // The network keeps one message per id: a send repeated after a crash is not a second one.
      const sent = await this.messaging.sentBy(me, messageId);
      if (sent) return { message: networkMessage(sent, me._id) };
    }
    await this.timeOutIfAsked(route);
    const message = await this.messaging.send(me, route, this.contentOf(content), 'instance', messageId);
    this.refuseForRestricted(conn, me, message);
    return { message: networkMessage(message, me._id) };
  }

  async change(conn: SandboxConnection, chat: string, change: MessageChange): Promise<NetworkMessage> {
    const me = await this.me(conn);
    const address = await this.address(me, chat);
    const original = await this.conversations.known(me._id, change.message_id);
    if (!original || original.type === 'edit' || original.type === 'revoke' || chatOf(original, me._id) !== address.jid) {
      throw notFound(`message ${change.message_id} not found in ${address.jid}`);
    }
    const route = original.group !== undefined ? { recipients: original.recipients, group: original.group } : { recipients: original.recipients };
    if (change.kind === 'edit') {
      if (original.from !== me._id) throw new DomainError('forbidden', 'only your own messages can be edited');
      if (original.type !== 'text' && original.media?.caption === undefined) throw invalidInput('message_id', 'only a text or a caption can be edited');
      const message = await this.messaging.send(me, route, { type: 'edit', text: change.text, edit: { message_id: change.message_id } }, 'instance');
      return networkMessage(message, me._id);
    }
    if (original.from !== me._id) {
      // Deleting another's message: only a group admin may, as on the network.
      const group = original.group !== undefined ? await this.groups.owned(me.account_id, original.group, 'phone') : undefined;
      const self = group?.participants.find((p) => p.phone === me._id);
      if (!self?.is_admin) throw new DomainError('forbidden', "only a group admin can delete another member's message");
    }
    const revoke = { message_id: change.message_id, ...(original.from !== me._id ? { participant: userJid(original.from) } : {}) };
    const message = await this.messaging.send(me, route, { type: 'revoke', revoke }, 'instance');
    return networkMessage(message, me._id);
  }

  /** The account reacts to a message it knows; `author` is checked against who wrote it. */
  async react(conn: SandboxConnection, chat: string, messageId: string, reaction: string, author?: MessageAuthor): Promise<NetworkMessage> {
    const me = await this.me(conn);
    const address = await this.address(me, chat);
    const target = await this.conversations.known(me._id, messageId);
    if (!target || chatOf(target, me._id) !== address.jid) throw notFound(`message ${messageId} not found in ${address.jid}`);
    const route = await this.messaging.route(me, address, 'phone');
    const fromMe = target.from === me._id;
    if (author && author.from_me !== fromMe) throw invalidInput('message_id', 'the key does not name the author of this message');
    const message = await this.messaging.send(me, route, { type: 'reaction', reaction: { message_id: messageId, text: reaction, author: target.from } }, 'instance');
    return networkMessage(message, me._id);
  }

  /** What the chat shows the other side: kept for the phone's view, and told to its linked instance. */
  async chatPresence(conn: SandboxConnection, chat: string, state: 'composing' | 'recording' | 'paused'): Promise<void> {
    const me = await this.me(conn);
    const address = await this.address(me, chat);
    const route = await this.messaging.route(me, address, 'phone');
    const chatJid = route.group ?? me.jid;
    const at = this.clock.now().toISOString();
    const deliveries: [SandboxConnection, SessionEvent][] = [];
    for (const phone of route.recipients) {
      await this.state.chatPresence.replaceOne(
        { _id: `${phone}:${chatJid}` },
        { _id: `${phone}:${chatJid}`, phone, chat: chatJid, from: me.jid, state, at },
        { upsert: true, ...DURABLE },
      );
      const other = this.registry.connectedFor(phone);
      if (other) deliveries.push([other, { type: 'ChatPresenceUpdated', data: { chat: chatJid, sender: me.jid, state } }]);
    }
    await deliverAll(deliveries);
  }

  /** A phone, user jid, group jid or LID (`…@lid`, a sandbox phone's LID) as the sandbox routes it. */
  private async address(me: PhoneDoc, to: string): Promise<Address> {
    if (to.endsWith('@lid')) {
      const [phone] = await this.state.phones.find({ lid: to, account_id: me.account_id }, { limit: 1 });
      if (!phone) throw invalidInput('phone', `${to} is not on WhatsApp`);
      return { kind: 'phone', phone: phone._id, jid: userJid(phone._id) };
    }
    return this.numbers.resolve(me, parseAddress('phone', to));
  }

  private contentOf(content: OutgoingContent): Content {
    const mentions = content.kind !== 'forward' && content.mentions?.length ? { mentions: content.mentions } : {};
    switch (content.kind) {
      case 'text':
        return { type: 'text', text: content.text, ...(content.preview && content.link_preview !== false ? { link_preview: content.preview } : {}), ...mentions };
      case 'buttons': {
        const buttons = { items: content.buttons.map((b) => ({ id: b.id, text: b.text })), ...(content.footer !== undefined ? { footer: content.footer } : {}) };
        return { type: 'buttons', buttons, ...(content.text !== undefined ? { text: content.text } : {}), ...mentions };
      }
      case 'media':
        return { type: 'media', media: content.media, ...(content.view_once ? { view_once: true } : {}), ...mentions };
      case 'location':
        return { type: 'location', location: content.location, ...mentions };
      case 'contact':
        return { type: 'contact', contacts: content.contacts, ...mentions };
      case 'poll':
        // Drawn here, as the sending device does: votes are encrypted with it.
        return { type: 'poll', poll: { ...content.poll, message_secret: this.ids.bytes(32).toString('base64') }, ...mentions };
      case 'list':
        return { type: 'list', text: content.text, list: content.list, ...mentions };
      case 'forward':
        return { ...forwardedContent(content.message), forwarded: true };
    }
  }

  /**
   * A phone created with `send_timeouts` lets that many sends to it time out, one each, as
   * Baileys reports a query the network never answered (a Boom 408): nothing is delivered.
   */
  private async timeOutIfAsked(route: { recipients: string[]; group?: string }): Promise<void> {
    const [phone] = route.recipients;
    if (route.group !== undefined || phone === undefined) return;
    const took = await this.state.phones.updateOne({ _id: phone, send_timeouts: { $gt: 0 } }, { $inc: { send_timeouts: -1 } });
    if (took.modifiedCount > 0) throw Object.assign(new Error('Timed Out'), { output: { statusCode: 408 } });
  }

  /** A restricted recipient's network refuses the message after taking it: the sender hears so next. */
  private refuseForRestricted(conn: SandboxConnection, me: PhoneDoc, message: MessageDoc): void {
    if (message.group !== undefined) return;
    void this.phones.byIds(message.recipients).then((docs) => {
      if (![...docs.values()].some((d) => d.restricted === true)) return;
      const data = { message_ids: [message._id], chat: chatOf(message, me._id), sender: chatOf(message, me._id), state: 'Failed' as const, timestamp_s: unixSeconds(this.clock.now()), error: RESTRICTED };
      // Deferred: the refusal follows the send the instance records, as the network's ack does.
      return conn.deliver([{ type: 'ReceiptReceived', data }], { defer: true });
    }).catch(() => undefined);
  }

  private async me(conn: SandboxConnection): Promise<PhoneDoc> {
    const phone = conn.connectedPhone();
    const doc = (await this.phones.byIds([phone])).get(phone);
    if (!doc) throw new NotConnectedError('the linked sandbox phone no longer exists');
    return doc;
  }
}

/** What a forward carries of the stored message: its content, media by reference. */
function forwardedContent(m: NetworkMessage): Content {
  switch (m.type) {
    case 'media':
      if (m.media) return { type: 'media', media: m.media };
      break;
    case 'location':
      if (m.location) return { type: 'location', location: m.location };
      break;
    case 'contact':
      if (m.contacts) return { type: 'contact', contacts: m.contacts };
      break;
    case 'poll':
      if (m.poll) return { type: 'poll', poll: { name: m.poll.name, options: m.poll.options, selectable_count: m.poll.selectable_count } };
      break;
    case 'text':
    case 'buttons':
    case 'list':
      if (m.text !== undefined) return { type: 'text', text: m.text };
      break;
    default:
      break;
  }
  throw invalidInput('message_id', `a ${m.type} message cannot be forwarded`);
}
