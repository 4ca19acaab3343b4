import type { Logger } from 'pino';
import type { Clock } from '../infra/clock.js';
import type { Config } from '../infra/config/config.js';
import type { DocumentStore } from '../infra/docstore/port.js';
import type { IdGenerator } from '../infra/ids.js';
import type { MessagingNetwork } from './port.js';
import type { SandboxNetwork } from './sandbox/sandbox-network.js';
import type { SocketFactory } from './baileys/socket.js';
import type { FetchWaVersion } from './baileys/wa-version-source.js';

/** What tests change of the real network's driver; production leaves all unset. */
export interface NetworkHooks {
  /** Makes Baileys' socket (tests point it at a scripted WhatsApp server). */
  makeSocket?: SocketFactory;
  /** Asks for the current WhatsApp Web version (tests have no internet). */
  fetchWaVersion?: FetchWaVersion;
  versionFetchTimeoutMs?: number;
}

/** How long the start (or a 405) waits for web.whatsapp.com before the built-in version is used. */
const VERSION_FETCH_TIMEOUT_MS = 5000;

export interface NetworkChoice {
  network: MessagingNetwork;
  /** The simulated network when it is the one chosen: its /sandbox routes exist only then. */
  sandbox?: SandboxNetwork;
  /** Media hosts the download routes may fetch from while this driver runs. */
  mediaHosts: (url: URL) => boolean;
  /**
   * True when those hosts are the gateway itself (the sandbox serves its media at PUBLIC_URL):
   * not a tenant-chosen address, so fetched even over http or loopback.
   */
  mediaHostIsOwn: boolean;
  /** Headers those hosts expect on a download (WhatsApp's refuse some requests without its Origin). */
  mediaHeaders?: Record<string, string>;
  /** What /ready says of the driver beside its checks (the real network: the WhatsApp Web version in use). */
  describe?: () => Record<string, string>;
}

const WHATSAPP_MEDIA_HOST = /(^|\.)(whatsapp\.net|whatsapp\.com|fbcdn\.net)$/;

/**
 * Picks the driver named by MESSAGING_NETWORK. Each is imported only when chosen, so a sandbox
 * gateway never loads Baileys and the Baileys one never mounts /sandbox.
 */
export async function chooseNetwork(
  config: Config,
  deps: { docs: DocumentStore; clock: Clock; ids: IdGenerator; logger: Logger; hooks?: NetworkHooks },
): Promise<NetworkChoice> {
  if (config.MESSAGING_NETWORK === 'sandbox') {
    const { SandboxNetwork } = await import('./sandbox/sandbox-network.js');
    const sandbox = new SandboxNetwork({ docs: deps.docs, clock: deps.clock, ids: deps.ids, publicUrl: config.PUBLIC_URL, latencyMs: config.SANDBOX_LATENCY_MS });
    const sandboxMedia = new URL('/sandbox/media/', config.PUBLIC_URL);
    return {
      network: sandbox,
      sandbox,
      mediaHosts: (url) => url.origin === sandboxMedia.origin && url.pathname.startsWith(sandboxMedia.pathname),
      mediaHostIsOwn: true,
    };
  }
  const { BaileysNetwork } = await import('./baileys/baileys-network.js');
  const { parseWaVersion } = await import('./baileys/version.js');
  const { WaVersionSource, fetchWaWebVersion } = await import('./baileys/wa-version-source.js');
  const { DEFAULT_CONNECTION_CONFIG, DEFAULT_ORIGIN } = await import('@whiskeysockets/baileys');
  const logger = deps.logger.child({ module: 'baileys' });
  const versions = new WaVersionSource({
    ...(config.WHATSAPP_VERSION ? { configured: parseWaVersion(config.WHATSAPP_VERSION) } : {}),
    builtIn: DEFAULT_CONNECTION_CONFIG.version,
    fetch: deps.hooks?.fetchWaVersion ?? fetchWaWebVersion,
    timeoutMs: deps.hooks?.versionFetchTimeoutMs ?? VERSION_FETCH_TIMEOUT_MS,
    logger,
  });
  return {
    describe: () => ({ whatsapp_version: versions.describe() }),
    network: new BaileysNetwork({
      version: versions,
      logger,
      historySyncDays: config.HISTORY_SYNC_DAYS,
      receiveStatus: config.RECEIVE_STATUS,
      presence: config.SESSION_PRESENCE,
      ...(deps.hooks?.makeSocket ? { makeSocket: deps.hooks.makeSocket } : {}),
    }),
    mediaHosts: (url) => url.protocol === 'https:' && WHATSAPP_MEDIA_HOST.test(url.hostname),
    mediaHostIsOwn: false,
    // As WhatsApp Web (and Baileys' own downloads) send it.
    mediaHeaders: { Origin: DEFAULT_ORIGIN },
  };
}
