import { conflict, DomainError } from '../../domain/errors.js';
import type { Clock } from '../../infra/clock.js';
import type { SecretBox } from '../../infra/crypto/secret-box.js';
import { repeat } from '../../infra/repeat.js';
import { DuplicateKeyError, type Collection, type Document, type DocumentStore } from '../../infra/docstore/port.js';

export const IDEMPOTENCY_KEYS = 'idempotency_keys';
/** How long a key answers its first answer again (CONTRACT.md: 24 hours). */
export const KEY_TTL_MS = 24 * 3600_000;
/**
 * How long a request may hold its key before another may take it over. Only a request whose
 * process died holds a key that long; its answer never reached the client.
 */
export const LEASE_MS = 2 * 60_000;

/** A stored answer: what the first request answered, replayed byte for byte. */
export interface StoredAnswer {
  status: number;
  body: unknown;
  headers: Record<string, string>;
}

interface KeyDoc extends Document {
  account_id: string;
  fingerprint: string;
  state: 'in_flight' | 'done';
  created_at: number;
  expires_at: number;
  lease_until: number;
  /** The answer, sealed: a create answer carries the instance token, which is never kept in clear. */
  answer?: string;
}

export type Claim = { kind: 'run' } | { kind: 'replay'; answer: StoredAnswer };

/**
 * Idempotency keys in the document store, so they survive a restart and can be shared by
 * several gateway nodes. A key is claimed by inserting its record (the store's unique _id makes
 * one claimant win), answered by recording the answer, and released when the request failed, so
 * a failed request (which changed nothing) may be retried with the same key.
 */
export class IdempotencyStore {
  private readonly keys: Collection<KeyDoc>;

  constructor(
    docs: DocumentStore,
    private readonly box: SecretBox,
    private readonly clock: Clock,
  ) {
    this.keys = docs.collection<KeyDoc>(IDEMPOTENCY_KEYS);
  }

  async setup(): Promise<void> {
    await this.keys.createIndex({ name: 'expires_at', keys: { expires_at: 1 } });
  }

  /** Run the request (the key is now held), or replay the answer of the first one with this key. */
  async claim(id: string, accountId: string, fingerprint: string): Promise<Claim> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const now = this.clock.now().getTime();
      const fresh: KeyDoc = { _id: id, account_id: accountId, fingerprint, state: 'in_flight', created_at: now, expires_at: now + KEY_TTL_MS, lease_until: now + LEASE_MS };
      try {
        // Not fsynced: a claim lost in a crash belonged to a request that was never answered.
        await this.keys.insertOne(fresh);
        return { kind: 'run' };
      } catch (err) {
        if (!(err instanceof DuplicateKeyError)) throw err;
      }
      const seen = await this.keys.findOne({ _id: id });
      if (!seen) continue;
      const expired = seen.expires_at <= now;
      const abandoned = seen.state === 'in_flight' && seen.lease_until <= now;
      if (!expired && seen.fingerprint !== fingerprint) {
        throw conflict('this Idempotency-Key was used with a different request; use a new key for a new request');
      }
      if (!expired && seen.state === 'done') return { kind: 'replay', answer: this.unseal(seen) };
      if (!expired && !abandoned) {
        throw new DomainError('conflict', 'a request with this Idempotency-Key is still in progress; retry later', undefined, 1);
      }
      // Expired, or held by a request that died: taken over only if nobody else took it meanwhile.
      const taken = await this.keys.replaceOne({ _id: id, state: seen.state, lease_until: seen.lease_until, expires_at: seen.expires_at }, fresh);
      if (taken.matchedCount === 1) return { kind: 'run' };
    }
    throw new DomainError('conflict', 'a request with this Idempotency-Key is still in progress; retry later', undefined, 1);
  }

  /** Records the first answer; durable before it is sent, so an acknowledged answer is never run twice. */
  async answer(id: string, answer: StoredAnswer): Promise<void> {
    const sealed = this.box.seal(JSON.stringify(answer), id);
    await this.keys.updateOne({ _id: id }, { $set: { state: 'done', answer: sealed } }, { durable: true });
  }

  /** The request failed and changed nothing: the key is free again. */
  async release(id: string): Promise<void> {
    await this.keys.deleteOne({ _id: id, state: 'in_flight' });
  }

  /** Forgets keys past their 24 hours; returns how many. */
  sweep(): Promise<number> {
    return this.keys.deleteMany({ expires_at: { $lte: this.clock.now().getTime() } });
  }

  private unseal(doc: KeyDoc): StoredAnswer {
    return JSON.parse(this.box.open(doc.answer as string, doc._id).toString('utf8')) as StoredAnswer;
  }
}

/** Sweeps expired keys every `intervalMs` (unref'd); returns the stop. Reads treat an expired key as absent anyway. */
export function sweepPeriodically(store: IdempotencyStore, intervalMs: number, onError: (err: unknown) => void): () => void {
  const timer = repeat(intervalMs, () => store.sweep(), onError);
  return () => clearInterval(timer);
}
