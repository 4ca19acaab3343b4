import { invalidInput, notFound } from '../../domain/errors.js';
import type { NetworkMessage } from '../../domain/session/events.js';
import type { MessageChange, OutgoingContent } from '../../domain/session/outgoing.js';
import {
  NotConnectedError,
  type NumberCheck,
  type ButtonsContent,
  type MediaUpload,
  type MessageAuthor,
  type OutgoingMedia,
  type ProfileSnapshot,
  type SendOptions,
  type SentMessage,
  type UploadedMedia,
} from '../port.js';
import type { InstanceSending } from './instance-sending.js';
import type { MediaStore } from './media-store.js';
import { parseAddress } from './addresses.js';
import type { ConnectionActions, SandboxConnection } from './connection.js';
import type { Calls } from './calls.js';
import type { Conversations } from './conversations.js';
import type { Messaging } from './messaging.js';
import type { Numbers } from './numbers.js';
import type { Pairing } from './pairing.js';
import { profileSnapshot, type Phones } from './phones.js';
import type { Registry } from './registry.js';
import type { Signals } from './signals.js';
import type { PhoneDoc } from './state.js';
import { chatOf, networkMessage } from './views.js';

/**
 * What a linked instance does on the sandbox, as its phone would: messages land in the other
 * phones' inboxes (and reach their own linked instances), reads become receipts for the senders.
 * Address errors name `phone`, the field of the gateway's chat routes.
 */
export class InstanceActions implements ConnectionActions {
  constructor(
    private readonly phones: Phones,
    private readonly conversations: Conversations,
    private readonly messaging: Messaging,
    private readonly signals: Signals,
    private readonly pairing: Pairing,
    private readonly registry: Registry,
    private readonly calls: Calls,
    private readonly numbers: Numbers,
    private readonly media: MediaStore,
    private readonly sending: InstanceSending,
  ) {}

  uploadMedia(conn: SandboxConnection, file: MediaUpload): Promise<UploadedMedia> {
    return this.sending.uploadMedia(conn, file);
  }

  send(conn: SandboxConnection, to: string, content: OutgoingContent, messageId?: string): Promise<SentMessage> {
    return this.sending.send(conn, to, content, messageId);
  }

  change(conn: SandboxConnection, chat: string, change: MessageChange): Promise<NetworkMessage> {
    return this.sending.change(conn, chat, change);
  }

  sendChatPresence(conn: SandboxConnection, chat: string, state: 'composing' | 'recording' | 'paused'): Promise<void> {
    return this.sending.chatPresence(conn, chat, state);
  }

  async sendMedia(conn: SandboxConnection, to: string, media: OutgoingMedia, options?: SendOptions): Promise<NetworkMessage> {
    const me = await this.me(conn);
    const route = await this.messaging.route(me, await this.numbers.resolve(me, parseAddress('phone', to)), 'phone');
    if (options?.messageId !== undefined) {
      const sent = await this.messaging.sentBy(me, options.messageId);
      if (sent) return networkMessage(sent, me._id);
    }
    // Encrypted and kept by the sandbox's media host, as a phone's own upload is.
    const stored = await this.media.upload(me.account_id, {
      kind: media.kind,
      mimetype: media.mimetype,
      data_base64: media.bytes.toString('base64'),
      ...(media.file_name === undefined ? {} : { file_name: media.file_name }),
      ...(media.caption === undefined ? {} : { caption: media.caption }),
    });
    const message = await this.messaging.send(me, route, { type: 'media', media: stored }, 'instance', options?.messageId);
    return networkMessage(message, me._id);
  }

  async checkNumber(conn: SandboxConnection, phone: string): Promise<NumberCheck> {
    return this.numbers.check(await this.me(conn), phone);
  }

  requestPairingCode(conn: SandboxConnection, phone: string): Promise<string> {
    return this.pairing.requestCode(conn, phone);
  }

  async profile(conn: SandboxConnection): Promise<ProfileSnapshot> {
    return profileSnapshot(await this.me(conn));
  }

  async sendText(conn: SandboxConnection, to: string, text: string, options?: SendOptions): Promise<NetworkMessage> {
    const me = await this.me(conn);
    if (typeof text !== 'string' || text === '') throw invalidInput('message', 'must not be empty');
    const route = await this.messaging.route(me, await this.numbers.resolve(me, parseAddress('phone', to)), 'phone', options?.replyTo);
    if (options?.messageId !== undefined) {
      // The network keeps one message per id: a send repeated after a crash is not a second one.
      const sent = await this.messaging.sentBy(me, options.messageId);
      if (sent) return networkMessage(sent, me._id);
    }
    const message = await this.messaging.send(me, route, { type: 'text', text }, 'instance', options?.messageId);
    return networkMessage(message, me._id);
  }

  async sendButtons(conn: SandboxConnection, to: string, content: ButtonsContent, options?: SendOptions): Promise<NetworkMessage> {
    const me = await this.me(conn);
    if (!Array.isArray(content.buttons) || content.buttons.length === 0) throw invalidInput('buttons', 'at least one button');
    const route = await this.messaging.route(me, await this.numbers.resolve(me, parseAddress('phone', to)), 'phone');
    if (options?.messageId !== undefined) {
      const sent = await this.messaging.sentBy(me, options.messageId);
      if (sent) return networkMessage(sent, me._id);
    }
    const buttons = { items: content.buttons.map((b) => ({ id: b.id, text: b.text })), ...(content.footer !== undefined ? { footer: content.footer } : {}) };
    const message = await this.messaging.send(me, route, { type: 'buttons', text: content.text, buttons }, 'instance', options?.messageId);
    return networkMessage(message, me._id);
  }

  react(conn: SandboxConnection, chat: string, messageId: string, reaction: string, author?: MessageAuthor): Promise<NetworkMessage> {
    return this.sending.react(conn, chat, messageId, reaction, author);
  }

  /**
   * The media retry: the sender's phone uploads the file of a message this account has again.
   * Undefined for a message it does not have or media the sandbox never held.
   */
  async refreshMedia(conn: SandboxConnection, message: NetworkMessage): Promise<NetworkMessage['media'] | undefined> {
    const me = await this.me(conn);
    if (!message.media || !(await this.conversations.known(me._id, message.id))) return undefined;
    return this.media.reupload(me.account_id, message.media);
  }

  async markRead(conn: SandboxConnection, chat: string, messageIds: string[]): Promise<void> {
    const me = await this.me(conn);
    await this.signals.markRead(me, parseAddress('phone', chat), messageIds);
  }

  rejectCall(conn: SandboxConnection, callId: string, from: string): Promise<void> {
    return this.calls.reject(conn, callId, from);
  }

  async logout(conn: SandboxConnection): Promise<void> {
    await this.pairing.logout(conn);
  }

  end(conn: SandboxConnection): void {
    this.registry.forget(conn);
    conn.silence();
  }

  private async me(conn: SandboxConnection): Promise<PhoneDoc> {
    const phone = conn.connectedPhone();
    const doc = (await this.phones.byIds([phone])).get(phone);
    if (!doc) throw new NotConnectedError('the linked sandbox phone no longer exists');
    return doc;
  }
}
