import { Type, type Static } from '@sinclair/typebox';

/**
 * Request and answer shapes of the /sandbox routes (SANDBOX.md). The routes validate with them;
 * the SandboxNetwork takes the same types and re-checks what matters, so port-level callers get the
 * same 400s.
 */
const Phone = Type.String({ pattern: '^[0-9]{8,15}$', description: 'digits with country code', example: '5511999990001' });
const Jid = Type.String({ minLength: 1, maxLength: 128 });
const MessageId = Type.String({ minLength: 1, maxLength: 128 });

export const BusinessInput = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 256 }),
    verified_name: Type.Optional(Type.String({ maxLength: 256 })),
    website: Type.Optional(Type.String({ maxLength: 2048 })),
    email: Type.Optional(Type.String({ maxLength: 320 })),
    address: Type.Optional(Type.String({ maxLength: 1024 })),
    categories: Type.Optional(
      Type.Array(Type.Object({ id: Type.String({ maxLength: 128 }), name: Type.String({ maxLength: 256 }) }, { additionalProperties: false }), {
        maxItems: 10,
      }),
    ),
    profile_options: Type.Optional(Type.Record(Type.String(), Type.String({ maxLength: 1024 }))),
    business_hours_timezone: Type.Optional(Type.String({ maxLength: 64 })),
  },
  { additionalProperties: false },
);
export type BusinessInput = Static<typeof BusinessInput>;

export const CreatePhoneBody = Type.Object(
  {
    phone: Phone,
    push_name: Type.String({ minLength: 1, maxLength: 256 }),
    about: Type.Optional(Type.String({ maxLength: 1024 })),
    business: Type.Optional(BusinessInput),
    contacts: Type.Optional(Type.Array(Phone, { maxItems: 5000 })),
    addressing: Type.Optional(
      Type.Union([Type.Literal('pn'), Type.Literal('lid')], {
        description: 'lid: the phone appears to instances by its LID, as privacy-addressed users do (default pn)',
      }),
    ),
    restricted: Type.Optional(
      Type.Boolean({ description: "the network accepts instances' sends to this phone, then refuses them: the sender sees ReadReceipt Failed with Error.code 463" }),
    ),
    send_timeouts: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 100_000,
        description: "the next this many of instances' sends to this phone time out (the network never answers; nothing is delivered), as on a flaky network: a failure a retry gets past",
      }),
    ),
  },
  { additionalProperties: false },
);
export type CreatePhoneInput = Static<typeof CreatePhoneBody>;

export const ScanBody = Type.Object({ qr: Type.String({ minLength: 1, maxLength: 512 }) }, { additionalProperties: false });
export const LinkBody = Type.Object({ code: Type.String({ minLength: 1, maxLength: 32 }) }, { additionalProperties: false });

export const MEDIA_KINDS = ['image', 'video', 'audio', 'document', 'sticker'] as const;
export const MediaInput = Type.Object(
  {
    kind: Type.Union(MEDIA_KINDS.map((k) => Type.Literal(k))),
    mimetype: Type.String({ minLength: 3, maxLength: 255 }),
    data_base64: Type.String({ minLength: 1, description: 'the plain file, base64 (at most 64 MiB decoded)' }),
    file_name: Type.Optional(Type.String({ maxLength: 255 })),
    caption: Type.Optional(Type.String({ maxLength: 4096 })),
  },
  { additionalProperties: false },
);
export type MediaInput = Static<typeof MediaInput>;

export const SendBody = Type.Object(
  {
    to: Type.String({ minLength: 1, maxLength: 128, description: 'a phone number, a user jid or a group jid' }),
    text: Type.Optional(Type.String({ minLength: 1, maxLength: 65536 })),
    media: Type.Optional(MediaInput),
    reply_to: Type.Optional(MessageId),
    lid_only: Type.Optional(
      Type.Boolean({
        description:
          'sandbox: a LID-addressed phone\'s 1:1 message arrives by LID alone, without the phone jid, as the network sends some before it shares the phone↔LID pair',
      }),
    ),
    location: Type.Optional(
      Type.Object(
        {
          latitude: Type.Number({ minimum: -90, maximum: 90 }),
          longitude: Type.Number({ minimum: -180, maximum: 180 }),
          name: Type.Optional(Type.String({ maxLength: 1024 })),
        },
        { additionalProperties: false },
      ),
    ),
    contact: Type.Optional(
      Type.Object(
        { display_name: Type.String({ minLength: 1, maxLength: 256 }), vcard: Type.String({ minLength: 1, maxLength: 65536 }) },
        { additionalProperties: false },
      ),
    ),
    poll: Type.Optional(
      Type.Object(
        {
          name: Type.String({ minLength: 1, maxLength: 255 }),
          options: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { minItems: 2, maxItems: 12 }),
          selectable_count: Type.Integer({ minimum: 0, maximum: 12 }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type SendInput = Static<typeof SendBody>;

export const ReceiptsBody = Type.Object(
  {
    message_ids: Type.Array(MessageId, { minItems: 1, maxItems: 1000 }),
    state: Type.Union([Type.Literal('Delivered'), Type.Literal('Read')]),
  },
  { additionalProperties: false },
);
export type ReceiptsInput = Static<typeof ReceiptsBody>;

export const ReadBody = Type.Object({ chat: Jid }, { additionalProperties: false });
export type ReadInput = Static<typeof ReadBody>;

export const PresenceBody = Type.Object(
  { state: Type.Union([Type.Literal('available'), Type.Literal('unavailable')]) },
  { additionalProperties: false },
);
export type PresenceInput = Static<typeof PresenceBody>;

export const ChatPresenceBody = Type.Object(
  { to: Jid, state: Type.Union([Type.Literal('composing'), Type.Literal('recording'), Type.Literal('paused')]) },
  { additionalProperties: false },
);
export type ChatPresenceInput = Static<typeof ChatPresenceBody>;

export const CreateGroupBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    owner: Phone,
    participants: Type.Array(Phone, { maxItems: 1023 }),
    topic: Type.Optional(Type.String({ maxLength: 2048 })),
    announce: Type.Optional(Type.Boolean()),
    locked: Type.Optional(Type.Boolean()),
    ephemeral_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 31_536_000 })),
  },
  { additionalProperties: false },
);
export type CreateGroupInput = Static<typeof CreateGroupBody>;

export const ParticipantsBody = Type.Object(
  {
    add: Type.Optional(Type.Array(Phone, { maxItems: 1023 })),
    remove: Type.Optional(Type.Array(Phone, { maxItems: 1023 })),
    by: Phone,
  },
  { additionalProperties: false },
);
export type ParticipantsInput = Static<typeof ParticipantsBody>;

export const PhoneParams = Type.Object({ phone: Phone });
export const PhoneMessageParams = Type.Object({ phone: Phone, message_id: MessageId });
export const StatusBody = Type.Object({ text: Type.String({ minLength: 1, maxLength: 700 }) }, { additionalProperties: false });
export type StatusInput = Static<typeof StatusBody>;
export const VoteBody = Type.Object(
  { options: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 12, description: 'the option names chosen; [] withdraws the vote' }) },
  { additionalProperties: false },
);
export type VoteInput = Static<typeof VoteBody>;
export const ChatPresenceAnswer = Type.Object({
  presences: Type.Array(
    Type.Object({
      chat: Type.String({ description: 'the chat that showed it: the sender, or the group' }),
      from: Type.String({ description: 'who was typing' }),
      state: Type.Union([Type.Literal('composing'), Type.Literal('recording'), Type.Literal('paused')]),
      at: Type.String({ format: 'date-time' }),
    }),
  ),
});
export const EditBody = Type.Object({ text: Type.String({ minLength: 1, maxLength: 65536 }) }, { additionalProperties: false });
export type EditInput = Static<typeof EditBody>;
export const GroupParams = Type.Object({ jid: Jid });
export const MediaFileParams = Type.Object({ file: Type.String({ pattern: '^[A-Za-z0-9]{1,64}\\.enc$' }) });

export const PhoneAnswer = Type.Object({ phone: Type.String(), jid: Type.String(), lid: Type.Optional(Type.String()) });
export const MessageIdAnswer = Type.Object({ message_id: Type.String() });
export const GroupAnswer = Type.Object({ jid: Type.String() });
export const Done = Type.Object({});

export const SANDBOX_MESSAGE_TYPES = ['text', 'media', 'buttons', 'reaction', 'location', 'contact', 'poll', 'edit', 'revoke', 'list', 'poll_vote'] as const;

/** What an inbox item's `type` says: the kind the phone shows (media by its kind). */
export const INBOX_TYPES = ['text', 'image', 'video', 'audio', 'document', 'sticker', 'location', 'contact', 'poll', 'list', 'buttons', 'reaction', 'poll_vote'] as const;

const Opt = Type.Optional;
export const InboxEntry = Type.Object({
  message_id: Type.String(),
  from: Type.String({ description: 'jid of the sender' }),
  chat: Type.String({ description: "the sender's jid, or the group jid" }),
  type: Type.Union(INBOX_TYPES.map((t) => Type.Literal(t))),
  text: Opt(Type.String()),
  caption: Opt(Type.String()),
  reply_to: Opt(Type.String({ description: 'the quoted message' })),
  mentions: Opt(Type.Array(Type.String(), { description: 'jids mentioned' })),
  link_preview: Opt(Type.Object({ url: Type.String(), title: Type.String(), description: Opt(Type.String()) }, { description: "a text's link preview, as the sender built it" })),
  media: Opt(
    Type.Object({
      kind: Type.String(),
      mimetype: Type.String(),
      url: Type.String(),
      file_length: Type.Integer(),
      file_name: Opt(Type.String()),
      caption: Opt(Type.String()),
      seconds: Opt(Type.Integer()),
      voice: Opt(Type.Boolean({ description: 'a voice note (push-to-talk)' })),
      waveform: Opt(Type.Boolean({ description: 'the voice note carries a waveform' })),
      gif: Opt(Type.Boolean()),
      sha256: Type.String({ description: 'SHA-256 of the decrypted bytes, hex (GET .../inbox/{message_id}/media answers them)' }),
    }),
  ),
  location: Opt(Type.Object({ latitude: Type.Number(), longitude: Type.Number(), name: Opt(Type.String()), address: Opt(Type.String()) })),
  contacts: Opt(Type.Array(Type.Object({ display_name: Type.String(), vcard: Type.String() }), { description: 'the vCards' })),
  poll: Opt(Type.Object({ name: Type.String(), options: Type.Array(Type.String()), selectable_count: Type.Integer() })),
  list: Opt(
    Type.Object({
      button_text: Type.String(),
      title: Opt(Type.String()),
      footer: Opt(Type.String()),
      sections: Type.Array(
        Type.Object({ title: Type.String(), rows: Type.Array(Type.Object({ id: Type.String(), title: Type.String(), description: Opt(Type.String()) })) }),
      ),
    }),
  ),
  buttons: Opt(Type.Object({ footer: Opt(Type.String()), items: Type.Array(Type.Object({ id: Type.String(), text: Type.String() })) })),
  reaction: Opt(Type.Object({ message_id: Type.String(), text: Type.String() })),
  view_once: Opt(Type.Boolean()),
  forwarded: Opt(Type.Boolean()),
  edited_text: Opt(Type.String({ description: 'the text (or caption) after the latest edit for everyone' })),
  revoked: Type.Boolean({ description: 'deleted for everyone' }),
  status_from: Opt(Type.String({ description: 'status posts: who posted it' })),
  timestamp: Type.String({ format: 'date-time' }),
});
export type InboxEntry = Static<typeof InboxEntry>;
export const InboxAnswer = Type.Object({ messages: Type.Array(InboxEntry) });

/** Sandbox extension (not in SANDBOX.md): a phone calls another, so `reject_calls` can be seen working. */
export const CallBody = Type.Object({ to: Type.String({ minLength: 1, maxLength: 128, description: 'a phone number or a user jid' }) }, { additionalProperties: false });
export type CallInput = Static<typeof CallBody>;
export const CallAnswer = Type.Object({ call_id: Type.String() });

export const CallEntry = Type.Object({
  call_id: Type.String(),
  from: Type.String({ description: 'jid of the caller' }),
  to: Type.String({ description: 'jid of the callee' }),
  status: Type.Union([Type.Literal('ringing'), Type.Literal('rejected')], { description: "rejected once the callee's instance declines it" }),
  offered_at: Type.String({ format: 'date-time' }),
  rejected_at: Type.Optional(Type.String({ format: 'date-time' })),
});
export type CallEntry = Static<typeof CallEntry>;
export const CallsAnswer = Type.Object({ calls: Type.Array(CallEntry) });
