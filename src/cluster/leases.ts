import type { Clock } from '../infra/clock.js';
import { DuplicateKeyError, type Collection, type DocumentStore } from '../infra/docstore/port.js';

/**
 * A lease as stored: one document per name, never deleted, so the fencing token keeps growing
 * across releases and restarts. `expiresAt` is in milliseconds of the writer's clock: the nodes'
 * clocks are assumed to agree within a margin well below the renewal margin (NTP).
 */
export type LeaseDoc = {
  _id: string;
  holder: string | null;
  token: number;
  expiresAt: number;
  /** When the current token was handed out (ms, the taker's clock): how long the holder has had it. */
  acquiredAt: number;
  /**
   * The holder's internal HTTP address (NODE_URL), written with every acquisition: where other
   * nodes forward a request about a session this node owns. Null before the node listens; absent
   * on leases stored before nodes advertised one.
   */
  address?: string | null;
};

/** Who holds a lease now (never an expired or released one). */
export interface LeaseHolder {
  holder: string;
  token: number;
  expiresAt: number;
  address?: string;
}

export const LEASES_COLLECTION = 'cluster_leases';

/**
 * Named leases with fencing tokens on the DocumentStore port, for nodes sharing one MongoDB.
 *
 * Every change is one conditional single-document write (compare-and-set on the token, or an
 * insert that fails with DuplicateKeyError): no multi-document transaction, so it holds on a
 * MongoDB without a replica set and on the embedded store alike. The token grows by one on every
 * acquisition, so a write carrying an older token is from a node that was fenced out.
 */
export class Leases {
  private readonly col: Collection<LeaseDoc>;
  /** Set once the node listens (its port may be chosen then); leases taken before carry none. */
  private address: string | undefined;

  constructor(
    docs: DocumentStore,
    /** This process: one id per process, so a restarted node never mistakes an old lease for its own. */
    readonly nodeId: string,
    private readonly clock: Clock,
    collection = LEASES_COLLECTION,
  ) {
    this.col = docs.collection<LeaseDoc>(collection);
  }

  /** The address this node advertises (null before it listens). */
  advertised(): string | null {
    return this.address ?? null;
  }

  /** The internal address this node advertises in the leases it takes from now on. */
  advertise(address: string): void {
    this.address = address;
  }

  /**
   * Takes the lease when nobody holds it (never held, released or expired) and returns the new
   * fencing token; null when another node holds it. Held by us already: renews it, same token.
   */
  async acquire(name: string, ttlMs: number): Promise<number | null> {
    const now = this.now();
    const seen = await this.col.findOne({ _id: name });
    if (!seen) {
      try {
        await this.col.insertOne({ _id: name, holder: this.nodeId, token: 1, expiresAt: now + ttlMs, acquiredAt: now, address: this.address ?? null }, { durable: true });
        return 1;
      } catch (err) {
        // Another node inserted it first: it holds the lease.
        if (err instanceof DuplicateKeyError) return null;
        throw err;
      }
    }
    if (seen.holder === this.nodeId && seen.expiresAt > now) return (await this.renew(name, seen.token, ttlMs)) ? seen.token : null;
    if (seen.holder !== null && seen.expiresAt > now) return null;
    const token = seen.token + 1;
    // Compare-and-set on the token we read: of two nodes racing for a lapsed lease, one matches.
    const taken = await this.col.updateOne(
      { _id: name, token: seen.token, $or: [{ holder: null }, { expiresAt: { $lte: now } }] },
      { $set: { holder: this.nodeId, token, expiresAt: now + ttlMs, acquiredAt: now, address: this.address ?? null } },
      { durable: true },
    );
    return taken.matchedCount === 1 ? token : null;
  }

  /**
   * Extends our lease to now + ttl. False when it is no longer ours (another node took it after
   * it lapsed, or it was released). A lapsed lease nobody took yet is still ours to renew: the
   * unchanged token proves nobody else held it meanwhile.
   */
  async renew(name: string, token: number, ttlMs: number): Promise<boolean> {
    const renewed = await this.col.updateOne({ _id: name, holder: this.nodeId, token }, { $set: { expiresAt: this.now() + ttlMs, address: this.address ?? null } }, { durable: true });
    return renewed.matchedCount === 1;
  }

  /** Gives the lease up at once (the token stays, so the next holder gets a larger one). */
  async release(name: string, token: number): Promise<boolean> {
    const released = await this.col.updateOne({ _id: name, holder: this.nodeId, token }, { $set: { holder: null, expiresAt: 0 } }, { durable: true });
    return released.matchedCount === 1;
  }

  /** The current holder, or null when the lease is free (never held, released or expired). */
  async holder(name: string): Promise<LeaseHolder | null> {
    const doc = await this.col.findOne({ _id: name });
    if (!doc || doc.holder === null || doc.expiresAt <= this.now()) return null;
    return { holder: doc.holder, token: doc.token, expiresAt: doc.expiresAt, ...(typeof doc.address === 'string' ? { address: doc.address } : {}) };
  }

  /** Every stored lease of these names, held or not (one query, for a node scanning what it could take). */
  async list(names: readonly string[]): Promise<LeaseDoc[]> {
    return names.length === 0 ? [] : this.col.find({ _id: { $in: [...names] } });
  }

  /** True when the stored lease is free for anyone to acquire now. */
  isFree(doc: LeaseDoc | undefined): boolean {
    return !doc || doc.holder === null || doc.expiresAt <= this.now();
  }

  /** The last token handed out for the name (0 when never held), held or not: what a fence compares with. */
  async currentToken(name: string): Promise<number> {
    return (await this.col.findOne({ _id: name }))?.token ?? 0;
  }

  private now(): number {
    return this.clock.now().getTime();
  }
}
