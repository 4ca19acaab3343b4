import type { AnyMessageContent, BaileysEventMap, ConnectionState, GroupMetadata, proto, WAMessage } from '@whiskeysockets/baileys';
import type { ILogger } from '@whiskeysockets/baileys/lib/Utils/logger.js';
import { LRUCache } from 'lru-cache';
import type { NetworkMessage, SessionEvent } from '../../domain/session/events.js';
import { NotConnectedError, type NetworkClose, type NumberCheck, type OutgoingMedia, type ButtonsContent, type ChatAction, type ConnectionHandlers, type NetworkConnection, type ProfileSnapshot, type SendOptions } from '../port.js';
import type { MediaUpload, MessageAuthor, SentMessage, UploadedMedia } from '../port.js';
import type { MessageChange, OutgoingContent } from '../../domain/session/outgoing.js';
import { sendOutgoing, uploadMedia } from './baileys-sending.js';
import { changeContent } from './outgoing-content.js';
import type { BaileysAuthState } from './auth-state.js';
import { BaileysAccountOperations } from './account-operations.js';
import { OwnEchoes } from './own-echoes.js';
import type { BoundedCache } from './bounded-cache.js';
import type { DisappearingTimers } from './disappearing-timers.js';
import type { GroupDirectory } from './group-directory.js';
import { BUTTONS_FALLBACK, buttonsAsText } from './buttons-fallback.js';
import { chatModification } from './chat-modify.js';
import { groupsUpsertEvents } from './group-translator.js';
import { isGroupJid, isLid, normalizeJid } from './jid.js';
import { toJid } from '../../domain/session/phone-numbers.js';
import { lidMappingEvent, LidPairMemory, messageLidPairs, uniquePairs } from './lid-pairs.js';
import { lidsIn } from './batch-identities.js';
import { ReadKeys, readKeyOfStored } from './read-keys.js';
import type { NumberDirectory } from './number-directory.js';
import { ChatStateTracker } from './presence-translator.js';
import { fetchProfile, profileUpdatedData } from './profile.js';
import { SerialQueue } from './serial-queue.js';
import { messageContentOf } from './stored-messages.js';
import type { BaileysSocket } from './socket.js';
import { formatWaVersion, type WaVersion } from './version.js';
import type { WaVersionProvider } from './wa-version-source.js';
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
  /** The same, fetched through on a miss (a group's disappearing timer is in it). */
  groups?: GroupDirectory;
  /** Each chat's disappearing timer, so what is sent into such a chat disappears too. */
  timers?: DisappearingTimers;
  /** The account unlinked: caches kept for the instance across reconnects are now stale. */
  onUnlinked?: () => void;
  /** Which numbers are on the network (cached per instance). */
  numbers: NumberDirectory;
  /**
   * What the account announces on open (SESSION_PRESENCE): `available` makes the network send the
   * watched contacts' presence (it sends none to an account that is offline), at the price of the
   * phone's own notifications; `unavailable` (default) keeps the phone notified.
   */
  presence?: 'available' | 'unavailable';
  /** How long a chat action waits for the phone's app-state keys after pairing. */
  appStateKeyWaitMs?: number;
  /** A message of this session from the stored events (of `chat` when named): a reply quotes it, a read receipt goes where it came from. */
  storedMessage?: (messageId: string, chat?: string) => Promise<NetworkMessage | undefined>;
  /** Days of history kept from the phone's sync (older synced messages are dropped). */
  historySyncDays?: number;
  /** The client version announced, named when the network refuses it. */
  version: WaVersion;
  /** Where a newer version comes from when the network refuses this one (405). */
  versions?: WaVersionProvider;
  /** How long a pairing-code request waits for the network to offer pairing (first QR). */
  pairingTimeoutMs?: number;
}

const PAIRING_READY_MS = 20_000;
const APP_STATE_KEY_WAIT_MS = 15_000;
const MAX_WATCHED = 1000;

/** Baileys' refusals while the app-state sync key is missing (chats.js, chat-utils.js in rc14). */
function isMissingAppStateKey(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const data = (error as { data?: unknown }).data;
  const flagged = typeof data === 'object' && data !== null && (data as { isMissingKey?: unknown }).isMissingKey === true;
  return flagged || /app ?state key/i.test(error.message);
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
  private readonly readKeys = new ReadKeys();
  /** LIDs Baileys' mapping did not know lately. */
  private readonly unmapped = new LRUCache<string, true>({ max: 5000, ttl: 60_000 });
  /** Settles with the first QR of this socket (see requestPairingCode); rejects on close. */
  private readonly pairingReady: Promise<void>;
  private settlePairing!: (error?: Error) => void;
  /** People whose presence this socket subscribed to (bounded): those the integrator talks with. */
  private readonly watched = new Set<string>();
  /** Waiters for the app-state sync key the phone shares after pairing. */
  private appStateKeyWaiters: (() => void)[] = [];
  /** Counts key arrivals, so a key that arrives while a refused action is on its way back is not missed. */
  private appStateKeyArrivals = 0;
  /** Groups, profile, block list, privacy, labels, status posts (account-operations.ts). */
  readonly account: BaileysAccountOperations;
  private readonly ownEchoes = new OwnEchoes();

  constructor(private readonly deps: ConnectionDeps) {
    this.account = new BaileysAccountOperations({
      sock: deps.sock,
      numbers: deps.numbers,
      ensureOpen: () => this.ensureOpen(),
      call: (work) => this.call(work),
      appState: (work) => this.withAppStateKeys(work),
      expectEcho: (group, kind, people) => this.ownEchoes.expect(group, kind, people),
    });
    this.events = new SerialQueue((error) => deps.logger.error({ err: error }, 'delivering session events failed'));
    this.creds = new SerialQueue((error) => deps.logger.error({ err: error }, 'saving network credentials failed'));
    this.pairingReady = new Promise<void>((resolve, reject) => {
      this.settlePairing = (error) => (error ? reject(error) : resolve());
    });
    // Nobody may be waiting for it; a rejection nobody awaits must not crash the process.
    this.pairingReady.catch(() => undefined);
  }

  /** Subscribes to the socket. Called once, right after the socket is made. */
  start(): void {
    this.unsubscribe = this.deps.sock.ev.process((batch) => this.onBatch(batch));
  }

  // ---- inbound -------------------------------------------------------------------------------

  private onBatch(batch: Batch): void {
    if (!this.unsubscribe) return;
    // Baileys has already merged the update into its creds object; we persist a snapshot.
    if (batch['creds.update']) {
      this.creds.push(() => this.deps.auth.saveCreds());
      if (batch['creds.update'].myAppStateKeyId) this.appStateKeysArrived();
    }
    this.rememberGroups(batch);
    this.readKeys.observe(batch, (jid) => this.lidPairs.pnOf(jid));
    const timers = this.deps.timers;
    if (timers) {
      const changes = timers.observe(batch, (jid) => this.lidPairs.pnOf(jid));
      this.creds.push(() => timers.save(changes));
    }
    // Translated in the delivery queue, in arrival order: people this connection cannot name by
    // phone number yet are first looked up in Baileys' own mapping.
    this.events.push(() => this.translate(batch));
    if (batch.call) this.onCalls(batch.call);
    const update = batch['connection.update'];
    if (update) this.onConnectionUpdate(update);
  }

  /** One emission as SessionEvents, handed to the manager. Accepted while attached, so it outlives a close that follows it. */
  private async translate(batch: Batch): Promise<void> {
    let events: SessionEvent[];
    try {
      const known = await this.pairsFromStore(batch);
      const translated = translateBatch(batch, { ...this.context(), wasTyping: this.typing.wasTyping });
      // The echo of a change this connection made itself (recorded by the API) is dropped.
      events = this.ownEchoes.filter(this.lidPairs.filter([...known, ...translated.events]));
      this.typing.observe(translated.events);
      this.watchSenders(translated.events);
      for (const jid of translated.refreshGroups) this.refreshGroup(jid);
    } catch (error) {
      // A payload shape we did not foresee must not take the connection down with it.
      this.deps.logger.error({ err: error, kinds: Object.keys(batch) }, 'translating network events failed');
      return;
    }
    if (events.length > 0) await this.deps.handlers.onEvents(events);
  }

  /**
   * The phone↔LID pairs a batch needs: those it tells itself (a message key's alternate jid)
   * serve all of it, and the LIDs this connection has not met are looked up in Baileys' own
   * mapping, which outlives the connection (our key store). Those found are reported as
   * learned, once per connection, like any other pair.
   */
  private async pairsFromStore(batch: Batch): Promise<SessionEvent[]> {
    const told = messageLidPairs(batch['messages.upsert']?.messages ?? []);
    const mapped = batch['lid-mapping.update'];
    if (mapped) told.push(...uniquePairs([[mapped.pn, mapped.lid], [mapped.lid, mapped.pn]]));
    for (const pair of told) this.lidPairs.remember(pair);
    const mapping = this.deps.sock.signalRepository?.lidMapping;
    const unknown = lidsIn(batch).filter((lid) => !this.lidPairs.pnOf(lid) && !this.unmapped.has(lid));
    if (!mapping || unknown.length === 0) return [];
    const found = await mapping.getPNsForLIDs(unknown).catch((error: unknown) => {
      this.deps.logger.warn({ err: error }, 'reading the LID mapping failed');
      return null;
    });
    const pairs = uniquePairs((found ?? []).map(({ pn, lid }) => [pn, lid]));
    for (const pair of pairs) this.lidPairs.remember(pair);
    // Not asked again for a minute: a busy group of hidden numbers would read the store on every emission.
    for (const lid of unknown) if (!this.lidPairs.pnOf(lid)) this.unmapped.set(lid, true);
    return lidMappingEvent(pairs);
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
    if (update.qr) {
      this.settlePairing();
      this.deps.handlers.onQr(update.qr);
    }
    if (update.connection === 'open') this.onOpen();
    if (update.connection === 'close') this.onClosed(update.lastDisconnect?.error);
  }

  private onOpen(): void {
    this.state = 'open';
    const { sock } = this.deps;
    if (sock.user) this.deliver([connectedEvent(sock.user, sock.authState.creds)]);
    if (this.deps.presence === 'available') {
      sock.sendPresenceUpdate('available').catch((error: unknown) => this.deps.logger.warn({ err: error }, 'announcing presence failed'));
    }
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
    this.settlePairing(new NotConnectedError('the connection closed before the network offered pairing'));
    this.detach();
    const close: NetworkClose = disconnectReasonOf(error);
    if (close.reason === 'logged_out') this.deps.onUnlinked?.();
    // Baileys emits the close from inside its own end(), so this end() is normally a no-op; it
    // is kept so the socket is certainly closed (timers, websocket) before the manager, hearing
    // of the close, opens the next one.
    this.events.push(async () => {
      await this.deps.sock.end(undefined);
      await this.creds.drain();
      if (close.reason === 'client_outdated') await this.versionRefused(close);
      this.deps.handlers.onClose(close);
    });
  }

  /**
   * WhatsApp refused the announced version (405): a newer one fetched now makes the next socket
   * worth opening at once (`retry`); otherwise the operator must set one, and the message says so.
   */
  private async versionRefused(close: NetworkClose): Promise<void> {
    const refused = formatWaVersion(this.deps.version);
    const newer = await this.deps.versions?.refused(this.deps.version).catch(() => undefined);
    if (newer) {
      close.retry = true;
      close.message = `WhatsApp refused client version ${refused} (405); retrying with the current one, ${formatWaVersion(newer)}`;
      return;
    }
    close.message =
      `WhatsApp refused client version ${refused} (405) and no newer version could be fetched from web.whatsapp.com: ` +
      'set WHATSAPP_VERSION to the current WhatsApp Web version, restart the gateway, then pair again (or restart the session)';
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
    this.settlePairing(new NotConnectedError('the connection was closed'));
    // Closed before the flush: what the flush releases is stored, but nothing new is started for it.
    this.state = 'closed';
    if (this.deps.sock.ev.isBuffering()) this.deps.sock.ev.flush();
    this.unsubscribe();
    this.unsubscribe = undefined;
  }

  private context(): TranslateContext {
    const user = this.deps.sock.user ?? this.deps.sock.authState.creds.me;
    const pnOf = this.lidPairs.pnOf;
    const days = this.deps.historySyncDays;
    const nowS = Math.floor(Date.now() / 1000);
    const base: TranslateContext = days === undefined ? { pnOf, nowS } : { pnOf, nowS, historySinceS: nowS - days * 86_400 };
    return user ? { ...base, me: { jid: user.id, ...(user.lid ? { lid: user.lid } : {}) } } : base;
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

  /**
   * Subscribes to the presence of the people the integrator is talking with (live 1:1 messages
   * either way), once per socket: the network sends Presence and ChatPresence only for subscribed
   * contacts. Bounded, so a busy account does not subscribe to everyone it ever heard from.
   */
  private watchSenders(events: SessionEvent[]): void {
    for (const event of events) {
      if (event.type !== 'MessageReceived' || event.data.upsert !== 'notify' || event.data.message.is_group) continue;
      this.watch(event.data.message.chat);
    }
  }

  private watch(jid: string): void {
    if (isGroupJid(jid) || this.watched.has(jid) || this.watched.size >= MAX_WATCHED || this.state !== 'open') return;
    this.watched.add(jid);
    this.deps.sock.presenceSubscribe(jid).catch((error: unknown) => {
      this.watched.delete(jid);
      this.deps.logger.debug({ err: error, jid }, 'presence subscription failed');
    });
  }

  private appStateKeysArrived(): void {
    this.appStateKeyArrivals++;
    const waiters = this.appStateKeyWaiters;
    this.appStateKeyWaiters = [];
    for (const w of waiters) w();
  }

  /** Resolves when the phone's app-state key arrives; rejects after the wait, saying what to do. */
  private appStateKeys(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.appStateKeyWaiters = this.appStateKeyWaiters.filter((w) => w !== done);
        reject(new Error('the phone has not shared its chat-sync keys yet (right after pairing it takes a moment); retry shortly'));
      }, this.deps.appStateKeyWaitMs ?? APP_STATE_KEY_WAIT_MS);
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      this.appStateKeyWaiters.push(done);
    });
  }

  // ---- outbound ------------------------------------------------------------------------------

  async requestPairingCode(phone: string): Promise<string> {
    const digits = phone.replace(/\D/g, '');
    if (!/^\d{7,15}$/.test(digits)) throw new Error('phone must be 7 to 15 digits with country code');
    if (this.state === 'closed') throw new NotConnectedError('the connection is closed');
    if (this.deps.sock.authState.creds.registered) throw new Error('this session is already paired');
    // Not at websocket open: the Noise handshake is still running then, and requestPairingCode
    // sets `creds.me`, which turns the handshake's registration into a login the server refuses
    // (the code never links and the session ends logged out). The server sends the first QR
    // (pair-device) once it waits for a companion: from then on a code may replace the QR.
    await this.waitForPairing();
    return this.call(() => this.deps.sock.requestPairingCode(digits));
  }

  private async waitForPairing(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('the network did not get ready for pairing in time; retry')), this.deps.pairingTimeoutMs ?? PAIRING_READY_MS);
    });
    try {
      await Promise.race([this.pairingReady, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async profile(): Promise<ProfileSnapshot> {
    this.ensureOpen();
    const profile = await this.call(() =>
      fetchProfile(this.deps.sock, (what, error) => this.deps.logger.debug({ err: error }, `profile ${what} unavailable`)),
    );
    return profile.snapshot;
  }

  async checkNumber(phone: string): Promise<NumberCheck> {
    this.ensureOpen();
    return this.call(() => this.deps.numbers.check(phone));
  }

  async sendText(to: string, text: string, options: SendOptions = {}): Promise<NetworkMessage> {
    this.ensureOpen();
    const jid = await this.call(() => this.deps.numbers.address(toJid(to)));
    const content: AnyMessageContent = options.replyTo ? { text, contextInfo: await this.quoteOf(jid, options.replyTo) } : { text };
    return this.send(jid, content, options.messageId);
  }

  async sendMedia(to: string, media: OutgoingMedia, options: Pick<SendOptions, 'messageId'> = {}): Promise<NetworkMessage> {
    this.ensureOpen();
    const jid = await this.call(() => this.deps.numbers.address(toJid(to)));
    const caption = media.caption === undefined ? {} : { caption: media.caption };
    const content: AnyMessageContent =
      media.kind === 'image'
        ? { image: media.bytes, mimetype: media.mimetype, ...caption }
        : media.kind === 'video'
          ? { video: media.bytes, mimetype: media.mimetype, ...caption }
          : media.kind === 'audio'
            ? { audio: media.bytes, mimetype: media.mimetype }
            : { document: media.bytes, mimetype: media.mimetype, fileName: media.file_name ?? 'file', ...caption };
    return this.send(jid, content, options.messageId);
  }

  async sendButtons(to: string, content: ButtonsContent, options: Pick<SendOptions, 'messageId'> = {}): Promise<{ message: NetworkMessage; fallback?: string }> {
    this.ensureOpen();
    const jid = await this.call(() => this.deps.numbers.address(toJid(to)));
    const message = await this.send(jid, { text: buttonsAsText(content) }, options.messageId);
    return { message, fallback: BUTTONS_FALLBACK };
  }

  async react(chat: string, messageId: string, reaction: string, author: MessageAuthor = { from_me: false }): Promise<NetworkMessage> {
    const jid = toJid(chat);
    // The key names the reacted message: ours, or in a group its author (without it the network cannot tell which).
    const key = { remoteJid: jid, id: messageId, fromMe: author.from_me, ...(author.participant ? { participant: toJid(author.participant) } : {}) };
    return this.send(jid, { react: { text: reaction, key } });
  }

  async uploadMedia(file: MediaUpload): Promise<UploadedMedia> {
    this.ensureOpen();
    return this.call(() => uploadMedia(this.deps.sock, file, this.deps.logger));
  }

  /** Every kind: media already uploaded goes out as is; replies quote from the stored message. */
  async sendMessage(to: string, content: OutgoingContent, options: Pick<SendOptions, 'messageId'> = {}): Promise<SentMessage> {
    this.ensureOpen();
    const jid = await this.call(() => this.deps.numbers.address(toJid(to)));
    this.watch(jid);
    const replyTo = content.kind === 'forward' ? undefined : content.reply_to;
    const mentions = content.kind === 'forward' ? undefined : content.mentions?.map(toJid);
    const context = { ...(replyTo ? { quote: await this.quoteOf(jid, replyTo) } : {}), ...(mentions?.length ? { mentions } : {}) };
    // Into a disappearing chat, a message carries the chat's timer, as the phone's would.
    const expiration = await this.expirationFor(jid);
    const { sent, fallback, pollSecret } = await this.call(() => sendOutgoing(this.deps.sock, jid, content, context, options.messageId, expiration));
    const message = this.sentMessage(sent);
    if (pollSecret && message.poll) message.poll.message_secret = pollSecret.toString('base64');
    return fallback ? { message, fallback } : { message };
  }

  async change(chat: string, change: MessageChange): Promise<NetworkMessage> {
    const jid = toJid(chat);
    return this.send(jid, changeContent(jid, change));
  }

  async sendChatPresence(chat: string, state: 'composing' | 'recording' | 'paused'): Promise<void> {
    this.ensureOpen();
    await this.call(() => this.deps.sock.sendPresenceUpdate(state, toJid(chat)));
  }

  /** Reads go where each message came from (its LID when it came by LID), as Baileys acknowledged it. */
  async markRead(chat: string, messageIds: string[], sender?: string): Promise<void> {
    this.ensureOpen();
    const jid = toJid(chat);
    const participant = sender ? toJid(sender) : undefined;
    const keys = await Promise.all(
      messageIds.map(async (id) => {
        const remembered = this.readKeys.remembered(id, normalizeJid(jid) ?? jid);
        if (remembered) return remembered;
        const stored = await this.deps.storedMessage?.(id, normalizeJid(jid)).catch(() => undefined);
        if (stored && !stored.from_me) return readKeyOfStored(stored);
        return { remoteJid: jid, id, fromMe: false, ...(participant ? { participant } : {}) };
      }),
    );
    await this.call(() => this.deps.sock.readMessages(keys));
  }

  /**
   * Right after pairing the phone has not shared its app-state keys yet, and Baileys refuses chat
   * actions until it has: such a refusal waits (bounded) for the keys and is tried once more.
   */
  async modifyChat(chat: string, action: ChatAction): Promise<void> {
    this.ensureOpen();
    const jid = toJid(chat);
    await this.withAppStateKeys(() => this.deps.sock.chatModify(chatModification(jid, action), jid));
  }

  /** An app-state change; refused for want of the phone's sync keys, it waits for them (bounded) and is tried once more. */
  private async withAppStateKeys(work: () => Promise<void>): Promise<void> {
    const modify = () => this.call(work);
    const arrivals = this.appStateKeyArrivals;
    try {
      await modify();
    } catch (error) {
      if (!isMissingAppStateKey(error)) throw error;
      if (this.appStateKeyArrivals === arrivals) await this.appStateKeys();
      await modify();
    }
  }

  /**
   * Baileys' re-upload request (updateMediaMessage): the phone that has the media uploads it
   * again and answers the new direct path. The message is rebuilt from what we stored of it.
   */
  async refreshMedia(message: NetworkMessage): Promise<NetworkMessage['media'] | undefined> {
    this.ensureOpen();
    const content = messageContentOf(message);
    if (!message.media || !content) return undefined;
    const key = {
      remoteJid: message.chat_lid ?? message.chat,
      id: message.id,
      fromMe: message.from_me,
      ...(message.is_group ? { participant: message.sender_lid ?? message.sender } : {}),
    };
    const updated = await this.call(() => this.deps.sock.updateMediaMessage({ key, message: content }));
    return translateMessage(updated, this.context())?.media;
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
    this.watch(jid);
    // A reaction is not a message of the chat: it takes no timer.
    const ephemeralExpiration = 'react' in content ? 0 : await this.expirationFor(jid);
    const options = { ...(messageId === undefined ? {} : { messageId }), ...(ephemeralExpiration ? { ephemeralExpiration } : {}) };
    const sent = await this.call(() => this.deps.sock.sendMessage(jid, content, Object.keys(options).length ? options : undefined));
    return this.sentMessage(sent);
  }

  /**
   * The disappearing timer (seconds) of the chat a message goes to, 0 when off: a group's from its
   * metadata, a person's from what the network reported of the chat, by either of their jids.
   */
  async expirationFor(jid: string): Promise<number> {
    if (isGroupJid(jid)) {
      const meta = await this.deps.groups?.get(jid).catch(() => undefined);
      return meta?.ephemeralDuration ?? 0;
    }
    const timers = this.deps.timers;
    if (!timers) return 0;
    const chat = normalizeJid(jid) ?? jid;
    const mapping = this.deps.sock.signalRepository?.lidMapping;
    const other = mapping ? await (isLid(chat) ? mapping.getPNForLID(chat) : mapping.getLIDForPN(chat)).catch(() => null) : null;
    const otherChat = normalizeJid(other);
    return timers.of(chat, ...(otherChat && otherChat !== chat ? [otherChat] : []));
  }

  private sentMessage(sent: WAMessage | undefined): NetworkMessage {
    const message = sent && translateMessage(sent, this.context());
    if (!message) throw new Error('the network accepted the message but returned no record of it');
    return message;
  }

  /**
   * A reply carries the quoted message's id, its author and its content, so the recipient's phone
   * shows the quote. They come from the stored session events; a message the log no longer holds
   * (past retention) is quoted by id alone, attributed to the peer of a 1:1 chat.
   */
  private async quoteOf(jid: string, replyTo: string): Promise<proto.IContextInfo> {
    const quoted = await this.deps.storedMessage?.(replyTo, normalizeJid(jid)).catch((error: unknown) => {
      this.deps.logger.warn({ err: error }, 'reading the quoted message failed');
      return undefined;
    });
    if (!quoted) {
      return { stanzaId: replyTo, ...(isGroupJid(jid) ? {} : { participant: normalizeJid(jid) }), quotedMessage: { conversation: '' } };
    }
    const me = this.deps.sock.user?.id ?? this.deps.sock.authState.creds.me?.id;
    const author = quoted.from_me ? normalizeJid(me) : quoted.sender;
    return { stanzaId: replyTo, ...(author ? { participant: author } : {}), quotedMessage: messageContentOf(quoted) ?? { conversation: '' } };
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

