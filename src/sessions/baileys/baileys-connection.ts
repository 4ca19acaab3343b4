import type { AnyMessageContent, BaileysEventMap, ConnectionState, GroupMetadata, WAMessage } from '@whiskeysockets/baileys';
import type { ILogger } from '@whiskeysockets/baileys/lib/Utils/logger.js';
import type { NetworkMessage, SessionEvent } from '../../domain/session/events.js';
import { NotConnectedError, type ButtonsContent, type ChatAction, type ConnectionHandlers, type NetworkConnection, type ProfileSnapshot, type SendOptions } from '../port.js';
import type { BaileysAuthState } from './auth-state.js';
import type { BoundedCache } from './bounded-cache.js';
import { BUTTONS_FALLBACK, buttonsAsText } from './buttons-fallback.js';
import { chatModification } from './chat-modify.js';
import { groupsUpsertEvents } from './group-translator.js';
import { isGroupJid, normalizeJid, toJid } from './jid.js';
import { LidPairMemory } from './lid-pairs.js';
import { ChatStateTracker } from './presence-translator.js';
import { fetchProfile, profileUpdatedData } from './profile.js';
import { SerialQueue } from './serial-queue.js';
import type { BaileysSocket } from './socket.js';
import { connectedEvent, disconnectReasonOf, translateBatch, translateMessage, type TranslateContext } from './translator.js';

type Batch = Partial<BaileysEventMap>;
type State = 'connecting' | 'open' | 'closed';

export interface ConnectionDeps {
  sock: BaileysSocket;
  auth: BaileysAuthState;
  handlers: ConnectionHandlers;
  logger: ILogger;
  /** Group metadata Baileys reads back before sending to a group (see BaileysNetwork). */
  groupCache: BoundedCache;
  /** The account unlinked: caches kept for the instance across reconnects are now stale. */
  onUnlinked?: () => void;
}

/**
 * One Baileys socket behind the NetworkConnection port. Every emission of the socket is
 * translated as it arrives (so the order is the network's) and delivered through one serial
 * queue; the close is queued behind the events that preceded it, so the session manager stores
 * them before it hears of the close.
 */
export class BaileysConnection implements NetworkConnection {
  private state: State = 'connecting';
  private unsubscribe: (() => void) | undefined;
  private readonly events: SerialQueue;
  private readonly creds: SerialQueue;
  private readonly typing = new ChatStateTracker();
  private readonly refreshing = new Set<string>();
  private readonly lidPairs = new LidPairMemory();

  constructor(private readonly deps: ConnectionDeps) {
    this.events = new SerialQueue((error) => deps.logger.error({ err: error }, 'delivering session events failed'));
    this.creds = new SerialQueue((error) => deps.logger.error({ err: error }, 'saving network credentials failed'));
  }

  /** Subscribes to the socket. Called once, right after the socket is made. */
  start(): void {
    this.unsubscribe = this.deps.sock.ev.process((batch) => this.onBatch(batch));
  }

  // ---- inbound -------------------------------------------------------------------------------

  private onBatch(batch: Batch): void {
    if (!this.unsubscribe) return;
    // Baileys has already merged the update into its creds object; we persist a snapshot.
    if (batch['creds.update']) this.creds.push(() => this.deps.auth.saveCreds());
    this.rememberGroups(batch);
    try {
      const { events, refreshGroups } = translateBatch(batch, { ...this.context(), wasTyping: this.typing.wasTyping });
      this.typing.observe(events);
      this.deliver(this.lidPairs.filter(events));
      for (const jid of refreshGroups) this.refreshGroup(jid);
    } catch (error) {
      // A payload shape we did not foresee must not take the connection down with it.
      this.deps.logger.error({ err: error, kinds: Object.keys(batch) }, 'translating network events failed');
    }
    if (batch.call) this.onCalls(batch.call);
    const update = batch['connection.update'];
    if (update) this.onConnectionUpdate(update);
  }

  /**
   * Live call offers go to the manager, which rejects them when the instance says so. Offers
   * replayed from while we were offline are over already; later call states (ringing, accept,
   * terminate) need nothing from us.
   */
  private onCalls(calls: NonNullable<Batch['call']>): void {
    const onCall = this.deps.handlers.onCall;
    if (!onCall) return;
    // `from` stays as the network gave it (device included): the reject names the call creator.
    for (const call of calls) if (call.status === 'offer' && !call.offline) onCall({ id: call.id, from: call.from });
  }

  private onConnectionUpdate(update: Partial<ConnectionState>): void {
    if (update.qr) this.deps.handlers.onQr(update.qr);
    if (update.connection === 'open') this.onOpen();
    if (update.connection === 'close') this.onClosed(update.lastDisconnect?.error);
  }

  private onOpen(): void {
    this.state = 'open';
    const { sock } = this.deps;
    if (sock.user) this.deliver([connectedEvent(sock.user, sock.authState.creds)]);
    // The groups list is fetched on every open: its answer arrives as a complete `groups.update`
    // (translated like any other) and also covers changes missed while disconnected.
    sock.groupFetchAllParticipating().catch((error: unknown) => this.deps.logger.warn({ err: error }, 'fetching groups failed'));
    // The profile is fetched beside the event flow, not inside it, so a slow lookup delays no
    // message; it lands in the queue whenever it is ready.
    fetchProfile(sock, (what, error) => this.deps.logger.debug({ err: error }, `profile ${what} unavailable`))
      .then((profile) => this.deliver([{ type: 'ProfileUpdated', data: profileUpdatedData(profile) }]))
      .catch((error: unknown) => this.deps.logger.warn({ err: error }, 'fetching the profile failed'));
  }

  private onClosed(error: unknown): void {
    this.detach();
    const close = disconnectReasonOf(error);
    if (close.reason === 'logged_out') this.deps.onUnlinked?.();
    // Baileys emits the close from inside its own end(), so this end() is normally a no-op; it
    // is kept so the socket is certainly closed (timers, websocket) before the manager, hearing
    // of the close, opens the next one.
    this.events.push(async () => {
      await this.deps.sock.end(undefined);
      await this.creds.drain();
      this.deps.handlers.onClose(close);
    });
  }

  /** Queues events for the manager; nothing once detached, so nothing follows the close. */
  private deliver(events: SessionEvent[]): void {
    if (events.length === 0 || !this.unsubscribe) return;
    this.events.push(() => this.deps.handlers.onEvents(events));
  }

  /**
   * Detaches from the socket. Events Baileys is still buffering are released first, so a
   * message decrypted (and acknowledged to the server) just before a drop is not lost.
   */
  private detach(): void {
    if (!this.unsubscribe) return;
    if (this.deps.sock.ev.isBuffering()) this.deps.sock.ev.flush();
    this.unsubscribe();
    this.unsubscribe = undefined;
    this.state = 'closed';
  }

  private context(): TranslateContext {
    const user = this.deps.sock.user ?? this.deps.sock.authState.creds.me;
    return user ? { me: { jid: user.id, ...(user.lid ? { lid: user.lid } : {}) } } : {};
  }

  /** Partial group changes and role changes need the whole group: fetch it, then upsert it. */
  private refreshGroup(jid: string): void {
    this.deps.groupCache.del(jid);
    if (this.refreshing.has(jid)) return;
    this.refreshing.add(jid);
    this.deps.sock
      .groupMetadata(jid)
      .then((meta) => {
        this.deps.groupCache.set(jid, meta);
        this.deliver(groupsUpsertEvents([meta]));
      })
      .catch((error: unknown) => this.deps.logger.warn({ err: error, group: jid }, 'refreshing group metadata failed'))
      .finally(() => this.refreshing.delete(jid));
  }

  private rememberGroups(batch: Batch): void {
    const complete = [...(batch['groups.upsert'] ?? []), ...(batch['groups.update'] ?? [])].filter(
      (g): g is GroupMetadata => typeof g.id === 'string' && typeof g.subject === 'string' && Array.isArray(g.participants),
    );
    for (const meta of complete) this.deps.groupCache.set(meta.id, meta);
    const changed = batch['group-participants.update']?.id;
    if (changed) this.deps.groupCache.del(changed);
  }

  // ---- outbound ------------------------------------------------------------------------------

  async requestPairingCode(phone: string): Promise<string> {
    const digits = phone.replace(/\D/g, '');
    if (!/^\d{7,15}$/.test(digits)) throw new Error('phone must be 7 to 15 digits with country code');
    if (this.state === 'closed') throw new NotConnectedError('the connection is closed');
    if (this.deps.sock.authState.creds.registered) throw new Error('this session is already paired');
    return this.call(async () => {
      await this.deps.sock.waitForSocketOpen();
      return this.deps.sock.requestPairingCode(digits);
    });
  }

  async profile(): Promise<ProfileSnapshot> {
    this.ensureOpen();
    const profile = await this.call(() =>
      fetchProfile(this.deps.sock, (what, error) => this.deps.logger.debug({ err: error }, `profile ${what} unavailable`)),
    );
    return profile.snapshot;
  }

  async sendText(to: string, text: string, options: SendOptions = {}): Promise<NetworkMessage> {
    const jid = toJid(to);
    const content: AnyMessageContent = options.replyTo ? { text, contextInfo: quoteOf(jid, options.replyTo) } : { text };
    return this.send(jid, content, options.messageId);
  }

  async sendButtons(to: string, content: ButtonsContent, options: Pick<SendOptions, 'messageId'> = {}): Promise<{ message: NetworkMessage; fallback?: string }> {
    const message = await this.send(toJid(to), { text: buttonsAsText(content) }, options.messageId);
    return { message, fallback: BUTTONS_FALLBACK };
  }

  async react(chat: string, messageId: string, reaction: string, fromMe = false): Promise<NetworkMessage> {
    const jid = toJid(chat);
    return this.send(jid, { react: { text: reaction, key: { remoteJid: jid, id: messageId, fromMe } } });
  }

  async markRead(chat: string, messageIds: string[], sender?: string): Promise<void> {
    this.ensureOpen();
    const jid = toJid(chat);
    const participant = sender ? toJid(sender) : undefined;
    const keys = messageIds.map((id) => ({ remoteJid: jid, id, fromMe: false, ...(participant ? { participant } : {}) }));
    await this.call(() => this.deps.sock.readMessages(keys));
  }

  async modifyChat(chat: string, action: ChatAction): Promise<void> {
    this.ensureOpen();
    const jid = toJid(chat);
    await this.call(() => this.deps.sock.chatModify(chatModification(jid, action), jid));
  }

  async groupInviteCode(group: string): Promise<string> {
    this.ensureOpen();
    const code = await this.call(() => this.deps.sock.groupInviteCode(toJid(group)));
    if (!code) throw new Error('the network gave no invite code');
    return code;
  }

  async rejectCall(callId: string, from: string): Promise<void> {
    this.ensureOpen();
    await this.call(() => this.deps.sock.rejectCall(callId, toJid(from)));
  }

  /** Unlinks this device. Like end(), no onClose follows: the caller knows why it closed. */
  async logout(): Promise<void> {
    this.ensureOpen();
    this.detach();
    try {
      await this.call(() => this.deps.sock.logout());
    } finally {
      this.deps.onUnlinked?.();
      await this.deps.sock.end(undefined);
      await this.settle();
    }
  }

  async end(): Promise<void> {
    if (!this.unsubscribe) return this.settle();
    this.detach();
    await this.deps.sock.end(undefined);
    await this.settle();
  }

  /** Lets already queued events and credential writes finish. */
  private async settle(): Promise<void> {
    await this.events.drain();
    await this.creds.drain();
  }

  private async send(jid: string, content: AnyMessageContent, messageId?: string): Promise<NetworkMessage> {
    this.ensureOpen();
    const sent = await this.call(() => this.deps.sock.sendMessage(jid, content, messageId === undefined ? undefined : { messageId }));
    return this.sentMessage(sent);
  }

  private sentMessage(sent: WAMessage | undefined): NetworkMessage {
    const message = sent && translateMessage(sent, this.context());
    if (!message) throw new Error('the network accepted the message but returned no record of it');
    return message;
  }

  private ensureOpen(): void {
    if (this.state !== 'open') throw new NotConnectedError('the WhatsApp connection is not open');
  }

  /** Socket calls made while the socket is going down fail with Baileys' 428; that is ours to say. */
  private async call<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (disconnectReasonOf(error).reason === 'connection_closed') {
        throw new NotConnectedError('the WhatsApp connection closed', { cause: error });
      }
      throw error;
    }
  }
}

/**
 * A reply needs the quoted message's id, its author and its content; we keep no message store,
 * so the quote names the message by id, attributes it to the peer in a 1:1 chat, and carries no
 * preview text. WhatsApp links the reply by id; the preview shows empty.
 */
function quoteOf(jid: string, replyTo: string) {
  return {
    stanzaId: replyTo,
    ...(isGroupJid(jid) ? {} : { participant: normalizeJid(jid) }),
    quotedMessage: { conversation: '' },
  };
}
