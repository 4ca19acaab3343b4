import { Browsers, makeWASocket, proto } from '@whiskeysockets/baileys';
import { isBroadcastChat } from '../../domain/session/broadcasts.js';
import type { Logger } from 'pino';
import type { ConnectOptions, MessagingNetwork, NetworkConnection } from '../port.js';
import { baileysAuthState } from './auth-state.js';
import { BaileysConnection } from './baileys-connection.js';
import { BoundedCache } from './bounded-cache.js';
import { DisappearingTimers } from './disappearing-timers.js';
import { GroupDirectory } from './group-directory.js';
import { NumberDirectory } from './number-directory.js';
import { isLid, normalizeJid } from './jid.js';
import { messageContentOf } from './stored-messages.js';
import type { SocketFactory } from './socket.js';
import type { WaVersion } from './version.js';
import type { WaVersionProvider } from './wa-version-source.js';

export interface BaileysNetworkOptions {
  /** The WhatsApp Web version to announce: fixed, or a source that knows the current one (wa-version-source.ts). */
  version: WaVersion | WaVersionProvider;
  logger: Logger;
  /** Shown on the phone under "Linked devices"; default "Chrome" (on Mac OS, Baileys' default). */
  browserName?: string;
  /** Days of message history kept from the phone's sync at pairing (HISTORY_SYNC_DAYS); 0 asks for none. */
  historySyncDays?: number;
  /** Deliver status posts and newsletters (RECEIVE_STATUS); otherwise Baileys does not even decrypt them. */
  receiveStatus?: boolean;
  /** What the account announces on open (SESSION_PRESENCE; see BaileysConnection). */
  presence?: 'available' | 'unavailable';
  /** How long a chat action waits for the phone's app-state keys after pairing. */
  appStateKeyWaitMs?: number;
  /** Replaces Baileys' makeWASocket, for tests of the wiring; production leaves it unset. */
  makeSocket?: SocketFactory;
}

/**
 * Caches that outlive one socket: retry counts and device lists stay valid across reconnects.
 * Each is passed to Baileys, which otherwise makes its own @cacheable/node-cache per socket (a
 * check timer each, and no bound on entries). Ours are LRUs without timers (expired entries are
 * dropped when read or evicted), so a reconnect leaves nothing running behind. Baileys still
 * makes one small debounce cache of its own per socket, which it closes in end().
 */
interface InstanceCaches {
  msgRetryCounter: BoundedCache;
  userDevices: BoundedCache;
  callOffer: BoundedCache;
  placeholderResend: BoundedCache;
  groups: BoundedCache;
  /** onWhatsApp answers, so only the first send to a number asks the network. */
  numbers: BoundedCache;
}

const MINUTE = 60_000;

/**
 * Baileys' log, at LOG_LEVEL: its info lines say what the connection does (registration, login,
 * pre-key uploads) and its warnings and errors why it failed. Except trace, which Baileys spends
 * on every stanza in and out (media upload tokens among them): that stops at debug.
 */
function baileysLogger(parent: Logger, instanceId: string): Logger {
  const child = parent.child({ instance_id: instanceId });
  if (child.level === 'trace') child.level = 'debug';
  return child;
}
const DEFAULT_HISTORY_DAYS = 7;

/**
 * The real network. Each connect() makes one Baileys socket for one instance; the session
 * manager owns reconnects and calls connect() again, and this driver reuses the instance's caches.
 */
export class BaileysNetwork implements MessagingNetwork {
  readonly kind = 'baileys' as const;
  private readonly caches = new Map<string, InstanceCaches>();

  constructor(private readonly options: BaileysNetworkOptions) {}

  async connect({ instanceId, auth: store, handlers, storedMessage }: ConnectOptions): Promise<NetworkConnection> {
    const logger = baileysLogger(this.options.logger, instanceId);
    const versions = Array.isArray(this.options.version) ? undefined : this.options.version;
    const version = versions ? await versions.current() : (this.options.version as WaVersion);
    // The signal-key read cache lives per connection, not per instance: the manager may wipe the
    // store between connections (logout), and a cache outliving that would serve dead keys.
    const auth = await baileysAuthState(store, { logger });
    const caches = this.cachesOf(instanceId);
    const make = this.options.makeSocket ?? makeWASocket;
    const groups = new GroupDirectory(caches.groups, (jid) => sock.groupMetadata(jid));
    /**
     * A message of this session in the chat Baileys names: as given (LID or phone jid), else as
     * the other identity of the same person (a retry request may come from the LID of a chat
     * whose message was stored under the phone jid, and the reverse).
     */
    const storedMessageOf = async (id: string, remoteJid: string | null | undefined) => {
      if (!storedMessage) return undefined;
      const chat = normalizeJid(remoteJid);
      if (!chat) return storedMessage(id);
      const found = await storedMessage(id, chat);
      if (found) return found;
      const mapping = sock.signalRepository?.lidMapping;
      const other = mapping ? await (isLid(chat) ? mapping.getPNForLID(chat) : mapping.getLIDForPN(chat)).catch(() => null) : null;
      const otherChat = normalizeJid(other);
      return otherChat && otherChat !== chat ? storedMessage(id, otherChat) : undefined;
    };
    const historyDays = this.options.historySyncDays ?? DEFAULT_HISTORY_DAYS;
    const sock = make({
      auth: auth.state,
      version,
      browser: Browsers.macOS(this.options.browserName ?? 'Chrome'),
      logger,
      // The account's own phone keeps receiving notifications while the gateway is linked.
      markOnlineOnConnect: false,
      // Our API sends are recorded from sendMessage's result (MessageSent origin 'api'); Baileys'
      // echo of them as an 'append' upsert would store them a second time as 'device'.
      emitOwnEvents: false,
      // Chosen on purpose: a full sync makes the phone upload years of history, which the gateway
      // would then drop; the recent sync brings the chats and recent messages, trimmed to
      // HISTORY_SYNC_DAYS by the connection (the registration payload has no days setting in rc14).
      syncFullHistory: false,
      shouldSyncHistoryMessage: ({ syncType }) => historyDays > 0 && syncType !== proto.HistorySync.HistorySyncType.FULL,
      // Status posts and channels are not conversations (CONTRACT.md); ignored jids are acked unread.
      ...(this.options.receiveStatus ? {} : { shouldIgnoreJid: (jid: string) => isBroadcastChat(jid) }),
      // A recipient's retry request for a message older than Baileys' recent-send cache is
      // answered from the instance's stored session events (while retention keeps the content).
      getMessage: async (key) => {
        if (!key.id || !storedMessage) return undefined;
        const stored = await storedMessageOf(key.id, key.remoteJid).catch((error: unknown) => logger.warn({ err: error }, 'reading a stored message failed'));
        // Only ours: a retry request is for a message this account sent.
        return stored && stored.from_me ? messageContentOf(stored) : undefined;
      },
      // Fetched through on a miss and kept: Baileys would query again on every group send.
      cachedGroupMetadata: async (jid) => groups.get(jid).catch(() => undefined),
      msgRetryCounterCache: caches.msgRetryCounter,
      userDevicesCache: caches.userDevices,
      callOfferCache: caches.callOffer,
      placeholderResendCache: caches.placeholderResend,
    });
    const connection = new BaileysConnection({
      sock,
      auth,
      handlers,
      logger,
      groupCache: caches.groups,
      groups,
      timers: new DisappearingTimers(store),
      version,
      ...(versions ? { versions } : {}),
      ...(storedMessage ? { storedMessage } : {}),
      historySyncDays: historyDays,
      ...(this.options.presence ? { presence: this.options.presence } : {}),
      ...(this.options.appStateKeyWaitMs !== undefined ? { appStateKeyWaitMs: this.options.appStateKeyWaitMs } : {}),
      numbers: new NumberDirectory((...jids) => sock.onWhatsApp(...jids), caches.numbers),
      // Device lists and group metadata of an unlinked account must not serve its successor.
      onUnlinked: () => this.forget(instanceId),
    });
    connection.start();
    return connection;
  }

  /** Forgets an instance's caches (after logout or deletion). */
  forget(instanceId: string): void {
    this.caches.delete(instanceId);
  }

  /** The caches an instance's sockets share, made on first use. */
  private cachesOf(instanceId: string): InstanceCaches {
    let caches = this.caches.get(instanceId);
    if (!caches) {
      // Sizes and lifetimes follow Baileys' defaults (DEFAULT_CACHE_TTLS), with a cap on entries.
      caches = {
        msgRetryCounter: new BoundedCache({ max: 2000, ttlMs: 60 * MINUTE }),
        userDevices: new BoundedCache({ max: 5000, ttlMs: 5 * MINUTE }),
        callOffer: new BoundedCache({ max: 100, ttlMs: 5 * MINUTE }),
        placeholderResend: new BoundedCache({ max: 2000, ttlMs: 60 * MINUTE }),
        groups: new BoundedCache({ max: 500, ttlMs: 5 * MINUTE }),
        // An hour for a number on WhatsApp: numbers rarely leave. One that is not is asked again
        // within minutes (NumberDirectory), so a number registered meanwhile is soon reachable.
        numbers: new BoundedCache({ max: 10_000, ttlMs: 60 * MINUTE }),
      };
      this.caches.set(instanceId, caches);
    }
    return caches;
  }
}
