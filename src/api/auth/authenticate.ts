import type { Context } from 'koa';
import { DomainError, forbidden, notFound, unauthorized } from '../../domain/errors.js';
import { BoundedMap } from '../../infra/bounded-map.js';
import type { Clock } from '../../infra/clock.js';
import { sameHash, tokenHash } from '../../infra/crypto/secrets.js';
import type { AccountQueries } from '../../projections/accounts/account-queries.js';
import type { InstanceDoc } from '../../projections/instances/instances-projection.js';
import type { InstanceQueries } from '../../projections/instances/instance-queries.js';
import type { AuthMode, Principal } from '../route.js';
import type { JwtIssuer } from './jwt.js';
import { cookieToken } from './session-cookie.js';
import type { TokenRegistry } from './token-registry.js';

/** Bounded: a flood of distinct tokens evicts the oldest instead of growing memory. */
const REMEMBERED_TOKENS = 10_000;
/** Longer than any token we issue; a longer header is refused before it is looked up anywhere. */
const MAX_TOKEN_LENGTH = 256;

export interface AuthResult {
  principal?: Principal;
  instance?: InstanceDoc;
}

/**
 * The auth rules of the spec in one place. A Bearer JWT is checked first; the token pair is
 * accepted only on instance routes; the route's instance must belong to the caller.
 */
export class Authenticator {
  /**
   * A client token is given once, at sign-up, and never reassigned (rotation changes only the
   * secret), so which account it names can be remembered. Bounded; only hits are kept.
   */
  private readonly clientTokenOwners = new BoundedMap<string, string>(REMEMBERED_TOKENS);
  /** Hashes of instance tokens seen lately: hashing cost more than the rest of the check. */
  private readonly instanceTokenHashes = new BoundedMap<string, string>(REMEMBERED_TOKENS);

  constructor(
    private readonly jwt: JwtIssuer,
    private readonly accounts: AccountQueries,
    private readonly instances: InstanceQueries,
    private readonly clock: Clock,
    /** Revoked access tokens and their use; every JWT is checked against it. */
    private readonly tokens: TokenRegistry,
  ) {}

  async authenticate(ctx: Pick<Context, 'get'> & Partial<Pick<Context, 'cookies' | 'method'>>, mode: AuthMode, instanceId: string | undefined): Promise<AuthResult> {
    if (mode === 'public') return {};
    const bearer = bearerToken(ctx.get('authorization')) ?? cookieToken(ctx);
    const instanceToken = ctx.get('x-instance-token');
    const clientToken = ctx.get('x-client-token');

    if (bearer !== null) {
      const now = this.clock.now();
      const known = this.jwt.known(bearer, now);
      const claims = known !== undefined ? known : await this.jwt.verify(bearer, now);
      if (!claims) throw unauthorized('invalid or expired access token');
      const revoked = this.tokens.revoked(claims.jti, now.getTime()) ?? (await this.tokens.load(claims.jti, now.getTime()));
      if (revoked) throw unauthorized('this access token was revoked');
      this.tokens.used(claims.jti, now);
      const accountId = claims.accountId;
      const principal: Principal = { accountId, via: 'jwt', tokenId: claims.jti };
      if (instanceId === undefined) return { principal };
      const instance = await this.instances.byId(instanceId);
      if (!instance) throw notFound('instance not found');
      if (instance.account_id !== accountId) throw forbidden('the instance does not belong to this account');
      return { principal, instance };
    }

    if (mode !== 'instance' || (!instanceToken && !clientToken)) {
      throw unauthorized(
        instanceToken || clientToken ? 'this route requires Authorization: Bearer <JWT>' : 'credentials required',
      );
    }
    if (!instanceToken || !clientToken) {
      throw unauthorized('send X-Instance-Token together with X-Client-Token');
    }
    if (instanceToken.length > MAX_TOKEN_LENGTH || clientToken.length > MAX_TOKEN_LENGTH) {
      throw unauthorized('malformed X-Instance-Token or X-Client-Token');
    }
    return this.byTokenPair(instanceToken, clientToken, instanceId);
  }

  private async byTokenPair(instanceToken: string, clientToken: string, instanceId: string | undefined): Promise<AuthResult> {
    const mismatch = () => forbidden('the credentials do not match this instance or its owner');
    if (instanceId === undefined) throw new DomainError('unauthorized', 'this route requires Authorization: Bearer <JWT>');
    const instance = await this.instances.byId(instanceId);
    if (!instance) throw notFound('instance not found');
    if (!sameHash(this.hashOfInstanceToken(instanceToken), instance.token_hash)) throw mismatch();
    const owner = this.clientTokenOwners.get(clientToken) ?? (await this.ownerOfClientToken(clientToken));
    if (owner === null || owner !== instance.account_id) throw mismatch();
    return { principal: { accountId: owner, via: 'instance_token' }, instance };
  }

  private hashOfInstanceToken(token: string): string {
    let hash = this.instanceTokenHashes.get(token);
    if (hash === undefined) {
      hash = tokenHash(token);
      this.instanceTokenHashes.set(token, hash);
    }
    return hash;
  }

  /** Called on a miss of `clientTokenOwners` (a hit is read inline, without an await). */
  private async ownerOfClientToken(clientToken: string): Promise<string | null> {
    const account = await this.accounts.byClientToken(clientToken);
    if (!account) return null;
    this.clientTokenOwners.set(clientToken, account._id);
    return account._id;
  }
}

function bearerToken(header: string): string | null {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (match) return match[1] as string;
  // A malformed Authorization header is a credential, not its absence.
  if (header.trim() !== '') return '';
  return null;
}
