import { BoundedMap } from '../../infra/bounded-map.js';
import type { AccessTokenQueries } from '../../projections/accounts/access-token-queries.js';
import type { Projection } from '../../projections/projection.js';

/** Tokens whose state is held in memory; past it the oldest are read again from the registry. */
const REMEMBERED_TOKENS = 10_000;
/**
 * How long a token seen active is believed active without asking the registry again. This is
 * the staleness allowed on a node that has not yet folded a revocation made on another node;
 * normally every node's projection runner folds it, and tells `watching`, within milliseconds.
 */
export const RECHECK_MS = 2_000;
/** Last use is recorded at most once per token per this period, per node. */
export const USE_GRAIN_MS = 60_000;

interface Seen {
  revoked: boolean;
  checkedAt: number;
}

/**
 * The access-token registry as the authenticator needs it on every request: is this token
 * revoked, and note that it was used. Revocation is read from the shared registry (the read
 * model every node folds from the log), cached briefly; a revocation folded by this node's own
 * runner is known at once. Use is written coarsely: one write per token per minute, not per request.
 */
export class TokenRegistry {
  private readonly seen = new BoundedMap<string, Seen>(REMEMBERED_TOKENS);
  private readonly lastUse = new BoundedMap<string, number>(REMEMBERED_TOKENS);

  constructor(
    private readonly tokens: AccessTokenQueries,
    /** Told when recording use fails; use is a hint, never a reason to refuse a request. */
    private readonly onUseError: (err: unknown) => void = () => undefined,
  ) {}

  /** Without waiting: true when known revoked, false when known active lately, undefined otherwise (then `load`). */
  revoked(jti: string, nowMs: number): boolean | undefined {
    const seen = this.seen.get(jti);
    if (!seen) return undefined;
    if (seen.revoked) return true;
    return nowMs - seen.checkedAt < RECHECK_MS ? false : undefined;
  }

  /**
   * From the registry. A token it does not list yet (its sign-in still being folded) is active:
   * it cannot have been revoked, since revoking needs it listed.
   */
  async load(jti: string, nowMs: number): Promise<boolean> {
    const doc = await this.tokens.byId(jti);
    const revoked = doc?.revoked_at !== undefined;
    this.remember(jti, revoked, nowMs);
    return revoked;
  }

  /** Records use, at most once per grain; never delays nor fails the request. */
  used(jti: string, now: Date): void {
    const nowMs = now.getTime();
    const grain = nowMs - (nowMs % USE_GRAIN_MS);
    if (this.lastUse.get(jti) === grain) return;
    this.lastUse.set(jti, grain);
    this.tokens.touch(jti, new Date(grain).toISOString()).catch((err: unknown) => {
      this.lastUse.delete(jti);
      this.onUseError(err);
    });
  }

  private remember(jti: string, revoked: boolean, nowMs: number): void {
    // A revocation is final: a late read of an older state never brings the token back.
    if (this.seen.get(jti)?.revoked) return;
    this.seen.set(jti, { revoked, checkedAt: nowMs });
  }

  /** The access tokens projection, telling this registry of every revocation it commits. */
  watching(projection: Projection): Projection {
    let pending: string[] = [];
    return {
      ...projection,
      apply: (event) => {
        if (event.type === 'AccessTokenRevoked') pending.push(event.data.jti);
        return projection.apply(event);
      },
      committed: (position) => {
        for (const jti of pending) this.remember(jti, true, 0);
        pending = [];
        projection.committed?.(position);
      },
    };
  }
}
