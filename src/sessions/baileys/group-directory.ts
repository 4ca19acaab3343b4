import type { GroupMetadata } from '@whiskeysockets/baileys';
import type { BoundedCache } from './bounded-cache.js';

/**
 * Group metadata for sends: from the instance's cache, else fetched once and kept there. Baileys
 * asks `cachedGroupMetadata` before every group send and, on a miss, queries the network without
 * caching the answer; the cache was only filled when the connection opened, so once an entry
 * expired (or for a group joined since) every send queried the group again.
 */
export class GroupDirectory {
  private readonly fetching = new Map<string, Promise<GroupMetadata>>();

  constructor(
    private readonly cache: BoundedCache,
    private readonly fetch: (jid: string) => Promise<GroupMetadata>,
  ) {}

  async get(jid: string): Promise<GroupMetadata> {
    const cached = this.cache.get<GroupMetadata>(jid);
    if (cached) return cached;
    // Senders of one group at once share one query.
    let pending = this.fetching.get(jid);
    if (!pending) {
      pending = this.fetch(jid)
        .then((meta) => (this.cache.set(jid, meta), meta))
        .finally(() => this.fetching.delete(jid));
      this.fetching.set(jid, pending);
    }
    return pending;
  }
}
