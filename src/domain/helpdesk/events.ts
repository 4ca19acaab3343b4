import { Type, type Static } from '@sinclair/typebox';

/** One helpdesk configuration per instance, on a stream of its own beside the instance's. */
export const helpdeskStream = (instanceId: string) => `helpdesk-${instanceId}`;

/** The settings an integrator chooses, in the spec's field order. */
export const HelpdeskSettings = Type.Object({
  enabled: Type.Boolean(),
  url: Type.String(),
  account_id: Type.String(),
  name_inbox: Type.String(),
  sign_msg: Type.Boolean(),
  sign_delimiter: Type.String(),
  number: Type.String(),
  reopen_conversation: Type.Boolean(),
  conversation_pending: Type.Boolean(),
  import_contacts: Type.Boolean(),
  import_messages: Type.Boolean(),
  days_limit_import_messages: Type.Integer({ minimum: 1 }),
  organization: Type.String(),
  logo: Type.String(),
  ignore_jids: Type.Array(Type.String()),
  ignore_groups: Type.Boolean(),
});
export type HelpdeskSettings = Static<typeof HelpdeskSettings>;

/**
 * A saved configuration, whole: every save records the complete result. Secrets are sealed
 * with the server key (the access token, the inbox's webhook secret). The callback path is never
 * stored: it is derived from the server key, the instance and `callback_generation` (how many
 * configurations this instance had removed before), and kept only as a hash, which is how a
 * callback finds its instance. Deriving it means two first saves racing push the same URL.
 */
export const HelpdeskConfigured = Type.Object({
  config_id: Type.String(),
  settings: HelpdeskSettings,
  token_sealed: Type.String(),
  token_masked: Type.String(),
  inbox_id: Type.Union([Type.Integer(), Type.Null()]),
  inbox_identifier: Type.String(),
  inbox_secret_sealed: Type.Union([Type.String(), Type.Null()]),
  callback_generation: Type.Integer({ minimum: 0 }),
  callback_path_hash: Type.String(),
});
export type HelpdeskConfiguredData = Static<typeof HelpdeskConfigured>;

export const HelpdeskRemoved = Type.Object({});

export const HelpdeskEventSchemas = { HelpdeskConfigured, HelpdeskRemoved } as const;

type Schemas = typeof HelpdeskEventSchemas;
export type HelpdeskEvent = { [K in keyof Schemas]: { type: K; data: Static<Schemas[K]> } }[keyof Schemas];
