import type { CacheStore } from '@whiskeysockets/baileys';
import { LRUCache } from 'lru-cache';

/**
 * Baileys' CacheStore over an LRU with a size cap and a time to live. Baileys' own default
 * (@cacheable/node-cache) only expires by time, and its `maxKeys` refuses new entries when full
 * instead of evicting old ones; a gateway holding many sessions needs memory bounded per session.
 */
export class BoundedCache implements CacheStore {
  private readonly lru: LRUCache<string, { value: unknown }>;

  /** `now` (milliseconds, monotonic) is the clock entries age by; tests pass their own. */
  constructor(options: { max: number; ttlMs: number; now?: () => number }) {
    // Values are boxed: the LRU refuses null and undefined, which Baileys stores (a deleted key).
    this.lru = new LRUCache({ max: options.max, ttl: options.ttlMs, ttlAutopurge: false, updateAgeOnGet: false, ...(options.now ? { perf: { now: options.now }, ttlResolution: 0 } : {}) });
  }

  get<T>(key: string): T | undefined {
    // The CacheStore contract is generic per call; the caller knows what it stored under the key.
    return this.lru.get(key)?.value as T | undefined;
  }

  /** `ttlMs` replaces the cache's lifetime for this entry. */
  set<T>(key: string, value: T, ttlMs?: number): void {
    this.lru.set(key, { value }, ttlMs === undefined ? undefined : { ttl: ttlMs });
  }

  del(key: string): void {
    this.lru.delete(key);
  }

  flushAll(): void {
    this.lru.clear();
  }

  get size(): number {
    return this.lru.size;
  }
}
