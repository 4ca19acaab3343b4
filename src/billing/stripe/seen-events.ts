import { createHash } from 'node:crypto';
import { DomainError } from '../../domain/errors.js';
import type { Clock } from '../../infra/clock.js';
import { DuplicateKeyError, type Collection, type Document, type DocumentStore } from '../../infra/docstore/port.js';

export const STRIPE_EVENTS = 'stripe_events';
/** Far past the signature tolerance: an event older than that is refused by its signature anyway. */
const KEEP_MS = 2 * 86_400_000;
/** How long one delivery may be applying before another may take it over (its process died). */
const LEASE_MS = 2 * 60_000;
const SWEEP_EVERY_MS = 3600_000;

interface SeenDoc extends Document {
  state: 'applying' | 'done';
  lease_until: number;
  expires_at: number;
}

/**
 * The Stripe event ids already applied. A signed event may be sent again within the signature's
 * tolerance (Stripe retries, or anyone who saw it replays it): applied a second time after a
 * later change, an old cancellation would cancel again. Each id is applied once: it is claimed
 * by inserting its record (the unique _id makes one delivery win across nodes), marked done once
 * applied, and given back when applying failed, so Stripe's retry applies it then.
 */
export class SeenStripeEvents {
  private readonly seen: Collection<SeenDoc>;
  private lastSweep = 0;

  constructor(
    docs: DocumentStore,
    private readonly clock: Clock,
  ) {
    this.seen = docs.collection<SeenDoc>(STRIPE_EVENTS);
  }

  /** Runs `apply` unless this event id was applied already. */
  async once(eventId: string, apply: () => Promise<void>): Promise<void> {
    const now = this.clock.now().getTime();
    await this.sweep(now);
    // Hashed: the id comes from the body, and only its shape's length is ours to bound.
    const id = createHash('sha256').update(eventId).digest('hex');
    if (!(await this.claim(id, now))) return;
    try {
      await apply();
    } catch (err) {
      await this.seen.deleteOne({ _id: id, state: 'applying' });
      throw err;
    }
    await this.seen.updateOne({ _id: id }, { $set: { state: 'done' } }, { durable: true });
  }

  /** True when this delivery applies the event; false when it was applied already. */
  private async claim(id: string, now: number): Promise<boolean> {
    const fresh: SeenDoc = { _id: id, state: 'applying', lease_until: now + LEASE_MS, expires_at: now + KEEP_MS };
    try {
      await this.seen.insertOne(fresh);
      return true;
    } catch (err) {
      if (!(err instanceof DuplicateKeyError)) throw err;
    }
    const doc = await this.seen.findOne({ _id: id });
    if (doc?.state === 'done' && doc.expires_at > now) return false;
    if (doc?.state === 'applying' && doc.lease_until > now) {
      throw new DomainError('conflict', 'this event is being applied; Stripe retries it later', undefined, 5);
    }
    // Gone meanwhile, expired, or left by a process that died: taken over only if still so.
    const taken = doc ? await this.seen.replaceOne({ _id: id, state: doc.state, lease_until: doc.lease_until }, fresh) : null;
    if (taken?.matchedCount === 1) return true;
    return this.claimOnce(id, fresh);
  }

  private async claimOnce(id: string, fresh: SeenDoc): Promise<boolean> {
    try {
      await this.seen.insertOne(fresh);
      return true;
    } catch (err) {
      if (err instanceof DuplicateKeyError) throw new DomainError('conflict', 'this event is being applied; Stripe retries it later', undefined, 5);
      throw err;
    }
  }

  private async sweep(now: number): Promise<void> {
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    await this.seen.deleteMany({ expires_at: { $lte: now } });
  }
}
