import { Type } from '@sinclair/typebox';

/** The shape of every access-token id the gateway issues (`at_` and 24 lower-case alphanumerics). */
export const TokenIdParams = Type.Object({ id: Type.String({ pattern: '^at_[a-z0-9]{24}$', description: 'the access token id (its `jti`)' }) });

export const ActiveToken = Type.Object({
  id: Type.String({ description: 'the token id (its `jti`); the token itself is never stored' }),
  issued_by: Type.Union([Type.Literal('password'), Type.Literal('client_credentials'), Type.Literal('web_app')], {
    description: '`password`: POST /auth/login; `client_credentials`: POST /token; `web_app`: the web app session cookie',
  }),
  issued_at: Type.String({ format: 'date-time' }),
  expires_at: Type.String({ format: 'date-time' }),
  last_used_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'to the minute; null when not used since issued' }),
  address: Type.String({ description: 'the address it was issued to' }),
  user_agent: Type.String({ description: 'the client it was issued to, as it named itself' }),
  current: Type.Boolean({ description: 'true for the token this request came with' }),
});

export const ActiveTokens = Type.Object({ tokens: Type.Array(ActiveToken) });

export const RevokedToken = Type.Object({ id: Type.String(), revoked_at: Type.String({ format: 'date-time' }) });
