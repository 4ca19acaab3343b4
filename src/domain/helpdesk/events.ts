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
const HelpdeskConfigured = Type.Object({
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

const HelpdeskRemoved = Type.Object({});

/** An agent answered in the helpdesk; the bridge sends it to WhatsApp from the log. */
const HelpdeskReplyReceived = Type.Object({
  helpdesk_message_id: Type.Integer(),
  conversation_id: Type.Integer(),
  /** The contact's id in the inbox (the public API addresses it so). */
  contact_source_id: Type.String(),
  content: Type.String(),
  agent: Type.String(),
  attachments: Type.Array(Type.Object({ file_type: Type.String(), data_url: Type.String() })),
  /** Whom the conversation is with, as the helpdesk knows the contact. */
  contact: Type.Object({ identifier: Type.Union([Type.String(), Type.Null()]), phone_number: Type.Union([Type.String(), Type.Null()]) }),
});
export type HelpdeskReplyReceivedData = Static<typeof HelpdeskReplyReceived>;

const HelpdeskConversationStatusChanged = Type.Object({
  conversation_id: Type.Integer(),
  status: Type.String(),
});

export const HelpdeskEventSchemas = { HelpdeskConfigured, HelpdeskRemoved, HelpdeskReplyReceived, HelpdeskConversationStatusChanged } as const;

/** What the configuration's decider folds: the helpdesk's own happenings are facts, not decisions. */
export type HelpdeskEvent =
  | { type: 'HelpdeskConfigured'; data: Static<typeof HelpdeskConfigured> }
  | { type: 'HelpdeskRemoved'; data: Static<typeof HelpdeskRemoved> };
