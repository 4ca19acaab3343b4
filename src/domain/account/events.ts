import { Type, type Static } from '@sinclair/typebox';

/** Stream of the account registry: sign-up is one append here, so e-mails stay unique and
 * `user_id` follows sign-up order without a second store. */
export const ACCOUNT_REGISTRY_STREAM = 'accounts';
export const accountStream = (accountId: string) => `account-${accountId}`;

const AccountRegistered = Type.Object({
  account_id: Type.String(),
  user_id: Type.Integer({ minimum: 1 }),
  email: Type.String(),
  password_hash: Type.String(),
  client_token: Type.String(),
  client_secret_hash: Type.String(),
});

const ClientSecretRotated = Type.Object({
  account_id: Type.String(),
  client_secret_hash: Type.String(),
});

const SignInMethod = Type.Union([Type.Literal('password'), Type.Literal('client_credentials')]);

/** Where an access token was asked for: the API's sign-in routes, or the web app's cookie session. */
export const IssuedVia = Type.Union([Type.Literal('api'), Type.Literal('web_app')]);
export type IssuedVia = Static<typeof IssuedVia>;

/**
 * Sign-ins are facts for the account's audit trail; `address` is the client's, per TRUST_PROXY.
 * A successful one names the access token it issued (by its `jti`, never the token itself), so
 * the account's active tokens are a fold of its own history. The token fields are absent on
 * sign-ins recorded before tokens were registered.
 */
const SignInSucceeded = Type.Object({
  method: SignInMethod,
  address: Type.String(),
  jti: Type.Optional(Type.String({ maxLength: 64 })),
  via: Type.Optional(IssuedVia),
  user_agent: Type.Optional(Type.String({ maxLength: 512 })),
  expires_at: Type.Optional(Type.String({ format: 'date-time' })),
  /** The client-secret generation the token carries: a later rotation ends it. */
  generation: Type.Optional(Type.Integer({ minimum: 0 })),
});

/** The owner ended one access token; every node refuses it from then on. */
export const AccessTokenRevoked = Type.Object({ jti: Type.String({ maxLength: 64 }) });

const SignInFailed = Type.Object({ method: SignInMethod, address: Type.String() });

export const AccountEventSchemas = { AccountRegistered, ClientSecretRotated, SignInSucceeded, SignInFailed, AccessTokenRevoked } as const;

export type SignInEvent =
  | { type: 'SignInSucceeded'; data: Static<typeof SignInSucceeded> }
  | { type: 'SignInFailed'; data: Static<typeof SignInFailed> };
export type AccountRegistryEvent = { type: 'AccountRegistered'; data: Static<typeof AccountRegistered> };
export type AccessTokenRevokedEvent = { type: 'AccessTokenRevoked'; data: Static<typeof AccessTokenRevoked> };
/** What the account's decider decides and folds; sign-ins share its stream as facts beside them. */
export type AccountEvent = { type: 'ClientSecretRotated'; data: Static<typeof ClientSecretRotated> } | AccessTokenRevokedEvent;
