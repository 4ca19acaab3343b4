import { BoundedMap } from '../infra/bounded-map.js';
import type { Clock } from '../infra/clock.js';
import type { Logger } from '../infra/logging/logger.js';
import type { NetworkConnection } from '../sessions/port.js';
import type { SessionManager } from '../sessions/session-manager.js';

export interface GroupInvitesOptions {
  /** How long a fetched code is reused; codes change only when an admin revokes the link. */
  ttlMs?: number;
  /** The group list waits no longer than this for the network; late codes are left out. */
  timeoutMs?: number;
  maxEntries?: number;
}

/**
 * Invite codes of the groups the account administers. Group metadata rarely carries the code, so
 * the group list asks the network for the ones it is about to show, and keeps them a while; when
 * the instance is offline it shows what it has.
 */
export class GroupInvites {
  private readonly cache: BoundedMap<string, { code: string; at: number }>;
  private readonly ttlMs: number;
  private readonly timeoutMs: number;

  constructor(
    private readonly manager: SessionManager,
    private readonly clock: Clock,
    private readonly logger: Logger,
    options: GroupInvitesOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? 3_600_000;
    this.timeoutMs = options.timeoutMs ?? 3_000;
    this.cache = new BoundedMap(options.maxEntries ?? 10_000);
  }

  /** A code just fetched or reset through the API: the list shows it at once, an old one never again. */
  remember(instanceId: string, group: string, code: string): void {
    this.cache.set(`${instanceId}:${group}`, { code, at: this.clock.now().getTime() });
  }

  forget(instanceId: string, group: string): void {
    this.cache.delete(`${instanceId}:${group}`);
  }

  async codes(instanceId: string, groups: string[]): Promise<Map<string, string>> {
    const now = this.clock.now().getTime();
    const found = new Map<string, string>();
    const missing: string[] = [];
    for (const jid of groups) {
      const hit = this.cache.get(`${instanceId}:${jid}`);
      if (hit && now - hit.at < this.ttlMs) found.set(jid, hit.code);
      else missing.push(jid);
    }
    if (missing.length === 0 || !this.manager.isConnected(instanceId)) return found;
    let connection: NetworkConnection;
    try {
      connection = this.manager.connection(instanceId);
    } catch {
      // It went down a moment ago: the list answers with what it has.
      return found;
    }
    const fetches = missing.map(async (jid) => {
      try {
        const code = await connection.groupInviteCode(jid);
        this.cache.set(`${instanceId}:${jid}`, { code, at: now });
        found.set(jid, code);
      } catch (err) {
        // Admin rights may have just been lost; the list still answers, without that link.
        this.logger.debug({ err, instanceId, group: jid }, 'invite code unavailable');
      }
    });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.timeoutMs)));
    await Promise.race([Promise.all(fetches), timeout]);
    clearTimeout(timer);
    return new Map(found);
  }
}
