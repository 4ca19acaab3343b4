import { webcrypto } from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';
import { BoundedMap } from '../../infra/bounded-map.js';

const ISSUER = 'messaging-gateway';
const AUDIENCE = 'gateway-api';
/** Verified tokens remembered; bounded so a flood of distinct tokens cannot grow memory. */
const VERIFIED_LIMIT = 10_000;

/** Which client-secret generation an account is at (SecretGenerations). */
export interface GenerationView {
  /** In memory, without waiting; undefined when not known yet. */
  current(accountId: string): number | undefined;
  /** From the read model; null when the account does not exist. */
  load(accountId: string): Promise<number | null>;
}

/** Who a verified access token speaks for, and which token it is (its `jti`, the registry's key). */
export interface TokenClaims {
  accountId: string;
  jti: string;
}

/**
 * Access tokens for accounts: HS256 with the server's key. Each carries (`gen`) the client-secret
 * generation of its account when it was issued, and dies when the secret is rotated; and an id
 * (`jti`) by which the account's token registry lists it and the owner can revoke it alone.
 */
export class JwtIssuer {
  /** Imported once: jose would import a raw key on every call, which cost more than the HMAC. */
  private readonly cryptoKey: Promise<webcrypto.CryptoKey>;
  /**
   * A token is immutable and valid until it expires, so a verified one need not be verified
   * again on the next request; its expiry is still checked against the clock every time.
   */
  private readonly verified = new BoundedMap<string, { sub: string; exp: number; gen: number; jti: string }>(VERIFIED_LIMIT);

  constructor(
    key: Uint8Array,
    readonly ttlSeconds: number,
    private readonly generations: GenerationView,
  ) {
    this.cryptoKey = webcrypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
  }

  async issue(accountId: string, generation: number, now: Date, jti: string): Promise<{ access_token: string; token_type: 'Bearer'; expires_in: number }> {
    const iat = Math.floor(now.getTime() / 1000);
    const token = await new SignJWT({ gen: generation })
      .setJti(jti)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(accountId)
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt(iat)
      .setExpirationTime(iat + this.ttlSeconds)
      .sign(await this.cryptoKey);
    return { access_token: token, token_type: 'Bearer', expires_in: this.ttlSeconds };
  }

  /**
   * The answer for a token verified before, without waiting: its claims, null once it has
   * expired, undefined when the token was never verified here (then call `verify`).
   */
  known(token: string, now: Date): TokenClaims | null | undefined {
    const known = this.verified.get(token);
    if (!known) return undefined;
    const current = this.generations.current(known.sub);
    // Not in memory (evicted): `verify` reads it.
    if (current === undefined) return undefined;
    if (known.exp > Math.floor(now.getTime() / 1000) && known.gen >= current) return { accountId: known.sub, jti: known.jti };
    this.verified.delete(token);
    return null;
  }

  /** The claims, or null for any token that is not ours, altered or expired. Ask `known` first. */
  async verify(token: string, now: Date): Promise<TokenClaims | null> {
    try {
      const { payload } = await jwtVerify(token, await this.cryptoKey, {
        algorithms: ['HS256'],
        issuer: ISSUER,
        audience: AUDIENCE,
        currentDate: now,
      });
      const { sub, exp, gen, jti } = payload;
      // A token without a generation or an id predates them: it could be neither rotated away
      // nor revoked, so it is refused (tokens live an hour; the owner signs in again).
      if (typeof sub !== 'string' || sub === '' || typeof exp !== 'number' || typeof gen !== 'number' || typeof jti !== 'string' || jti === '') return null;
      const current = this.generations.current(sub) ?? (await this.generations.load(sub));
      if (current === null || gen < current) return null;
      this.verified.set(token, { sub, exp, gen, jti });
      return { accountId: sub, jti };
    } catch {
      return null;
    }
  }
}
