import { jwtVerify, SignJWT } from 'jose';

const ISSUER = 'messaging-gateway';
const AUDIENCE = 'gateway-api';

/** Access tokens for accounts: HS256 with the server's key. */
export class JwtIssuer {
  constructor(
    private readonly key: Uint8Array,
    readonly ttlSeconds: number,
  ) {}

  async issue(accountId: string, now: Date): Promise<{ access_token: string; token_type: 'Bearer'; expires_in: number }> {
    const iat = Math.floor(now.getTime() / 1000);
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(accountId)
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt(iat)
      .setExpirationTime(iat + this.ttlSeconds)
      .sign(this.key);
    return { access_token: token, token_type: 'Bearer', expires_in: this.ttlSeconds };
  }

  /** The account id, or null for any token that is not ours, altered or expired. */
  async verify(token: string, now: Date): Promise<string | null> {
    try {
      const { payload } = await jwtVerify(token, this.key, {
        algorithms: ['HS256'],
        issuer: ISSUER,
        audience: AUDIENCE,
        currentDate: now,
      });
      return typeof payload.sub === 'string' && payload.sub !== '' ? payload.sub : null;
    } catch {
      return null;
    }
  }
}
