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

/** Sign-ins are facts for the account's audit trail; `address` is the client's, per TRUST_PROXY. */
const SignInSucceeded = Type.Object({ method: SignInMethod, address: Type.String() });

const SignInFailed = Type.Object({ method: SignInMethod, address: Type.String() });

export const AccountEventSchemas = { AccountRegistered, ClientSecretRotated, SignInSucceeded, SignInFailed } as const;

export type SignInEvent =
  | { type: 'SignInSucceeded'; data: Static<typeof SignInSucceeded> }
  | { type: 'SignInFailed'; data: Static<typeof SignInFailed> };
export type AccountRegistryEvent = { type: 'AccountRegistered'; data: Static<typeof AccountRegistered> };
export type AccountEvent = { type: 'ClientSecretRotated'; data: Static<typeof ClientSecretRotated> } | SignInEvent;
