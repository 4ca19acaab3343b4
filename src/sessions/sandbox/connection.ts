import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import type { DisconnectReason, NetworkMessage, SessionEvent } from '../../domain/session/events.js';
import type { SandboxAccountOperations } from './account-operations.js';
import { modifyChat } from './chat-actions.js';
import type { MessageChange, OutgoingContent } from '../../domain/session/outgoing.js';
import {
  NotConnectedError,
  type AuthStateStore,
  type ButtonsContent,
  type ConnectionHandlers,
  type MediaUpload,
  type MessageAuthor,
  type NetworkConnection,
  type NumberCheck,
  type OutgoingMedia,
  type SentMessage,
  type UploadedMedia,
  type ProfileSnapshot,
  type SendOptions,
} from '../port.js';

/** What a connection does on the network; the sandbox implements it once for all connections. */
export interface ConnectionActions {
  checkNumber(conn: SandboxConnection, phone: string): Promise<NumberCheck>;
  requestPairingCode(conn: SandboxConnection, phone: string): Promise<string>;
  profile(conn: SandboxConnection): Promise<ProfileSnapshot>;
  sendText(conn: SandboxConnection, to: string, text: string, options?: SendOptions): Promise<NetworkMessage>;
  sendButtons(conn: SandboxConnection, to: string, content: ButtonsContent, options?: SendOptions): Promise<NetworkMessage>;
  sendMedia(conn: SandboxConnection, to: string, media: OutgoingMedia, options?: SendOptions): Promise<NetworkMessage>;
  markRead(conn: SandboxConnection, chat: string, messageIds: string[]): Promise<void>;
  refreshMedia(conn: SandboxConnection, message: NetworkMessage): Promise<NetworkMessage['media'] | undefined>;
  react(conn: SandboxConnection, chat: string, messageId: string, reaction: string, author?: MessageAuthor): Promise<NetworkMessage>;
  uploadMedia(conn: SandboxConnection, file: MediaUpload): Promise<UploadedMedia>;
  send(conn: SandboxConnection, to: string, content: OutgoingContent, messageId?: string): Promise<SentMessage>;
  change(conn: SandboxConnection, chat: string, change: MessageChange): Promise<NetworkMessage>;
  sendChatPresence(conn: SandboxConnection, chat: string, state: 'composing' | 'recording' | 'paused'): Promise<void>;
  rejectCall(conn: SandboxConnection, callId: string, from: string): Promise<void>;
  logout(conn: SandboxConnection): Promise<void>;
  end(conn: SandboxConnection): void;
}

/**
 * pairing: showing a QR or holding pairing codes; linking: a phone is pairing with it right now;
 * connected: linked to `phone`; closed: ended, logged out or unlinked (nothing more is emitted
 * after end()).
 */
export type ConnectionState = 'pairing' | 'linking' | 'connected' | 'closed';

export interface DeliverOptions {
  /** Wait for the next turn of the event loop first: used when connect() has not returned yet. */
  defer?: boolean;
}

export class SandboxConnection implements NetworkConnection {
  state: ConnectionState = 'pairing';
  /** The linked phone, once connected. */
  phone: string | undefined;
  // Deliveries run one after another, so the manager stores events in the order they happened.
  private chain: Promise<void> = Promise.resolve();
  /** Events queued behind the chain that have not started: later deliveries join them. */
  private waiting: { events: SessionEvent[]; defer: boolean; done: Promise<boolean> } | undefined;
  private silenced = false;
  /** Set by the network as the connection is made (account-operations.ts). */
  account!: SandboxAccountOperations;

  constructor(
    readonly instanceId: string,
    readonly accountId: string,
    readonly auth: AuthStateStore,
    private readonly handlers: ConnectionHandlers,
    private readonly actions: ConnectionActions,
    private readonly latencyMs: number,
  ) {}

  /** The linked phone; NotConnectedError when the connection is not open. */
  connectedPhone(): string {
    if (this.state !== 'connected' || this.phone === undefined) throw new NotConnectedError('the sandbox connection is not connected');
    return this.phone;
  }

  /**
   * Queues events behind those already queued and resolves once the manager has taken them. A
   * rejection of onEvents reaches the caller (the phone's request fails loudly) without blocking
   * later deliveries.
   */
  deliver(events: SessionEvent[], options: DeliverOptions = {}): Promise<void> {
    return this.deliverTaken(events, options).then(() => undefined);
  }

  /**
   * As deliver, answering whether the manager took the events: false when the connection was
   * ended before their turn (a session handed to another node), so the network keeps the messages
   * for the account's next connection instead of losing them.
   */
  deliverTaken(events: SessionEvent[], options: DeliverOptions = {}): Promise<boolean> {
    // While the manager stores one batch (a durable write), what arrives meanwhile goes in the
    // next one together, in order: one write for many messages instead of one write each.
    const defer = options.defer === true;
    if (this.waiting && this.waiting.defer === defer) {
      this.waiting.events.push(...events);
      return this.waiting.done;
    }
    const batch = { events: [...events], defer, done: Promise.resolve(false), taken: false };
    batch.done = this.enqueue(
      async () => {
        batch.taken = true;
        if (batch.events.length > 0) await this.handlers.onEvents(batch.events);
      },
      options,
      // Closed once its turn comes, before the latency wait: later events wait their own.
      () => {
        if (this.waiting === batch) this.waiting = undefined;
      },
    ).then(() => batch.taken);
    this.waiting = batch;
    return batch.done;
  }

  /** Ends the connection from the network's side, after what is already queued. */
  close(close: { reason: DisconnectReason; statusCode?: number }, options: DeliverOptions = {}): Promise<void> {
    this.state = 'closed';
    return this.enqueue(async () => this.handlers.onClose(close), options);
  }

  /** Nothing more reaches the handlers, queued deliveries included (end()). */
  silence(): void {
    this.state = 'closed';
    this.silenced = true;
  }

  /** A phone calls the linked account: the offer is queued behind the events already queued. */
  offerCall(call: { id: string; from: string }): Promise<void> {
    return this.enqueue(async () => this.handlers.onCall?.(call), {});
  }

  showQr(qr: string): void {
    // After connect() has returned, as a real socket would, so the manager is ready for it.
    setImmediate(() => {
      if (!this.silenced && this.state === 'pairing') this.handlers.onQr(qr);
    });
  }

  requestPairingCode(phone: string): Promise<string> {
    return this.actions.requestPairingCode(this, phone);
  }

  checkNumber(phone: string): Promise<NumberCheck> {
    return this.actions.checkNumber(this, phone);
  }

  profile(): Promise<ProfileSnapshot> {
    return this.actions.profile(this);
  }

  sendText(to: string, text: string, options?: SendOptions): Promise<NetworkMessage> {
    return this.actions.sendText(this, to, text, options);
  }

  sendMedia(to: string, media: OutgoingMedia, options?: SendOptions): Promise<NetworkMessage> {
    return this.actions.sendMedia(this, to, media, options);
  }

  async sendButtons(to: string, content: ButtonsContent, options?: SendOptions): Promise<{ message: NetworkMessage; fallback?: string }> {
    // The sandbox renders buttons natively: never a fallback.
    return { message: await this.actions.sendButtons(this, to, content, options) };
  }

  markRead(chat: string, messageIds: string[]): Promise<void> {
    return this.actions.markRead(this, chat, messageIds);
  }

  refreshMedia(message: NetworkMessage): Promise<NetworkMessage['media'] | undefined> {
    return this.actions.refreshMedia(this, message);
  }

  react(chat: string, messageId: string, reaction: string, author?: MessageAuthor): Promise<NetworkMessage> {
    return this.actions.react(this, chat, messageId, reaction, author);
  }

  uploadMedia(file: MediaUpload): Promise<UploadedMedia> {
    return this.actions.uploadMedia(this, file);
  }

  sendMessage(to: string, content: OutgoingContent, options?: SendOptions): Promise<SentMessage> {
    return this.actions.send(this, to, content, options?.messageId);
  }

  change(chat: string, change: MessageChange): Promise<NetworkMessage> {
    return this.actions.change(this, chat, change);
  }

  sendChatPresence(chat: string, state: 'composing' | 'recording' | 'paused'): Promise<void> {
    return this.actions.sendChatPresence(this, chat, state);
  }

  /** The action itself changes nothing on the sandbox (see chat-actions.ts). */
  modifyChat(chat: string): Promise<void> {
    return modifyChat(this, chat);
  }

  groupInviteCode(group: string): Promise<string> {
    return this.account.inviteCode(group);
  }

  rejectCall(callId: string, from: string): Promise<void> {
    return this.actions.rejectCall(this, callId, from);
  }

  logout(): Promise<void> {
    return this.actions.logout(this);
  }

  async end(): Promise<void> {
    this.actions.end(this);
  }

  private enqueue(work: () => Promise<void>, options: DeliverOptions, onTurn?: () => void): Promise<void> {
    // Whatever is queued after this (a close, a call) must not be overtaken by later events.
    this.waiting = undefined;
    const run = async () => {
      onTurn?.();
      if (options.defer) await nextTurn();
      if (this.latencyMs > 0) await sleep(this.latencyMs);
      if (!this.silenced) await work();
    };
    const done = this.chain.then(run);
    this.chain = done.catch(() => undefined);
    return done;
  }
}
