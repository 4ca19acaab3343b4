import type { Document, DocumentStore } from '../../infra/docstore/port.js';
import { ACCESS_TOKENS, type AccessTokenDoc } from './access-tokens-projection.js';

/** Written beside the registry, never by its projection: use is not an event (see `touch`). */
export const ACCESS_TOKEN_USAGE = 'access_token_usage';

interface UsageDoc extends Document {
  _id: string;
  last_used_at: string;
}

export type ActiveToken = AccessTokenDoc & { last_used_at: string | null };

/** Past this many, an account's oldest active tokens are left out of the list (it is for people). */
export const MAX_LISTED = 200;

export class AccessTokenQueries {
  constructor(private readonly docs: DocumentStore) {}

  byId(jti: string): Promise<AccessTokenDoc | null> {
    return this.docs.collection<AccessTokenDoc>(ACCESS_TOKENS).findOne({ _id: jti });
  }

  /**
   * The account's tokens that still open the API: not revoked, not expired, not ended by a
   * rotation of the client secret after them. Newest first, each with when it was last used.
   */
  async active(accountId: string, generation: number, now: Date): Promise<ActiveToken[]> {
    const tokens = await this.docs
      .collection<AccessTokenDoc>(ACCESS_TOKENS)
      .find({ account_id: accountId, expires_at: { $gt: now.toISOString() }, revoked_at: { $exists: false }, generation: { $gte: generation } }, { sort: { expires_at: -1 }, limit: MAX_LISTED });
    const usage = tokens.length === 0 ? [] : await this.docs.collection<UsageDoc>(ACCESS_TOKEN_USAGE).find({ _id: { $in: tokens.map((t) => t._id) } });
    const used = new Map(usage.map((u) => [u._id, u.last_used_at]));
    return tokens.map((t) => ({ ...t, last_used_at: used.get(t._id) ?? null }));
  }

  /**
   * Records that a token was used at `at` (the caller has already coarsened it, to a write per
   * token per minute at most). `$max` keeps it moving forward whichever node writes last.
   */
  async touch(jti: string, at: string): Promise<void> {
    await this.docs.collection<UsageDoc>(ACCESS_TOKEN_USAGE).updateOne({ _id: jti }, { $max: { last_used_at: at } }, { upsert: true });
  }
}
