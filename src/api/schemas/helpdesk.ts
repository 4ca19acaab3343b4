import { Type } from '@sinclair/typebox';
import { Nullable } from './common.js';

const Text = (maxLength: number, extra: object = {}) => Type.String({ maxLength, ...extra });

/** The save body: the spec's request fields; omitted optional fields take their defaults. */
export const SaveHelpdeskBody = Type.Object(
  {
    enabled: Type.Boolean(),
    url: Type.String({ format: 'uri', maxLength: 2048, description: 'base address of the helpdesk, no trailing slash' }),
    account_id: Type.String({ pattern: '^[0-9]{1,20}$', description: 'numeric account id in the helpdesk' }),
    name_inbox: Type.String({ minLength: 1, maxLength: 255 }),
    token: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: "the helpdesk user's access token; omitted keeps the current one" })),
    sign_msg: Type.Optional(Type.Boolean({ default: false })),
    sign_delimiter: Type.Optional(Text(64, { default: '\n' })),
    number: Type.Optional(Text(32, { default: '' })),
    reopen_conversation: Type.Optional(Type.Boolean({ default: false })),
    conversation_pending: Type.Optional(Type.Boolean({ default: false })),
    import_contacts: Type.Optional(Type.Boolean({ default: false })),
    import_messages: Type.Optional(Type.Boolean({ default: false })),
    days_limit_import_messages: Type.Optional(Type.Integer({ minimum: 1, maximum: 3650, default: 3 })),
    auto_create: Type.Optional(Type.Boolean({ default: false, description: 'create the API inbox in the helpdesk when none of that name exists' })),
    organization: Type.Optional(Text(255, { default: '' })),
    logo: Type.Optional(Text(2048, { default: '' })),
    ignore_jids: Type.Optional(Type.Array(Text(128), { maxItems: 1000, default: [] })),
    ignore_groups: Type.Optional(Type.Boolean({ default: false })),
  },
  { additionalProperties: false },
);

/** The configuration as answered, in the spec's field order; the token only masked. */
export const HelpdeskConfiguration = Type.Object(
  {
    id: Type.String({ description: 'uuid of this configuration' }),
    instance_id: Type.String(),
    enabled: Type.Boolean(),
    url: Type.String(),
    account_id: Type.String(),
    name_inbox: Type.String(),
    token_masked: Type.String(),
    inbox_id: Nullable(Type.Integer()),
    inbox_identifier: Type.String(),
    sign_msg: Type.Boolean(),
    sign_delimiter: Type.String(),
    number: Type.String(),
    reopen_conversation: Type.Boolean(),
    conversation_pending: Type.Boolean(),
    import_contacts: Type.Boolean(),
    import_messages: Type.Boolean(),
    days_limit_import_messages: Type.Integer(),
    organization: Type.String(),
    logo: Type.String(),
    ignore_jids: Type.Array(Type.String()),
    ignore_groups: Type.Boolean(),
    webhook_url: Type.String({ description: "the URL to set as the helpdesk API inbox's webhook" }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
    import_progress: Nullable(
      Type.Object(
        {
          state: Type.Union([Type.Literal('running'), Type.Literal('done'), Type.Literal('failed')]),
          contacts_imported: Type.Integer(),
          messages_imported: Type.Integer(),
          messages_total: Type.Integer(),
        },
        { description: 'the history import (import_contacts, import_messages) after pairing; null before any' },
      ),
    ),
  },
  { $id: 'HelpdeskConfiguration' },
);
