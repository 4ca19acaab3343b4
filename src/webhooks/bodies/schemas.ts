import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { MESSAGE_KINDS } from '../../domain/session/events.js';

/**
 * What a webhook receiver gets: CONTRACT.md's body `{id, type, instance_id, seq, created_at,
 * event, state?}`. `event` keeps the spec's field names (PascalCase Info, the network's
 * camelCase message objects, `URL`/`fileSHA256`/`fileEncSha256` exactly as written there), so
 * integrators built against the spec parse it unchanged. Byte fields are base64; times are
 * RFC 3339 strings.
 */

const Str = Type.String();
const OptStr = Type.Optional(Type.String());
const DateTime = Type.String({ format: 'date-time' });
const Jid = Type.String({ description: 'network identifier: <digits>@s.whatsapp.net, <id>@g.us or <id>@lid' });

const ContextInfo = Type.Object(
  {
    stanzaID: Type.Optional(Type.String({ description: 'id of the message this one replies to' })),
    participant: Type.Optional(Type.String({ description: 'author of the quoted message, when the network said' })),
    quotedMessage: Type.Optional(Type.Object({ conversation: Str }, { description: 'the quoted text, as the reply carries it' })),
    mentionedJID: Type.Optional(Type.Array(Jid, { description: 'the people the message mentions (phone jids when known)' })),
  },
  { description: 'present when the message is a reply (stanzaID) or mentions people (mentionedJID)' },
);

/** The fields that map onto the media download request (spec, Events). */
const mediaFields = {
  URL: Type.String({ description: 'temporary media URL → url' }),
  mediaKey: Type.String({ description: 'base64 → media_key' }),
  directPath: Type.Optional(Type.String({ description: '→ direct_path' })),
  fileEncSha256: Type.Optional(Type.String({ description: 'base64 SHA-256 of the encrypted file → file_enc_sha256' })),
  fileSHA256: Type.String({ description: 'base64 SHA-256 of the decrypted file → file_sha256' }),
  fileLength: Type.Integer({ minimum: 0, description: 'bytes → file_length' }),
  mimetype: Type.String({ description: '→ mimetype' }),
  contextInfo: Type.Optional(ContextInfo),
};

const ImageMessage = Type.Object({
  ...mediaFields,
  caption: OptStr,
  width: Type.Optional(Type.Integer()),
  height: Type.Optional(Type.Integer()),
});
const VideoMessage = Type.Object({
  ...mediaFields,
  caption: OptStr,
  seconds: Type.Optional(Type.Integer()),
  width: Type.Optional(Type.Integer()),
  height: Type.Optional(Type.Integer()),
});
const AudioMessage = Type.Object({
  ...mediaFields,
  seconds: Type.Optional(Type.Integer()),
  PTT: Type.Optional(Type.Boolean({ description: 'a voice note' })),
});
const DocumentMessage = Type.Object({ ...mediaFields, caption: OptStr, fileName: OptStr });
const StickerMessage = Type.Object({ ...mediaFields, width: Type.Optional(Type.Integer()), height: Type.Optional(Type.Integer()) });

const MessageKey = Type.Object({
  ID: Type.String({ description: 'the message concerned' }),
  remoteJID: Jid,
  fromMe: Type.Optional(Type.Boolean()),
  participant: Type.Optional(Jid),
});

const ProtocolMessage = Type.Object(
  {
    type: Type.Union([Type.Literal('MESSAGE_EDIT'), Type.Literal('REVOKE')]),
    key: MessageKey,
    editedMessage: Type.Optional(Type.Object({ conversation: Str }, { description: 'the new content of an edit' })),
  },
  { description: 'an edit (MESSAGE_EDIT with editedMessage) or a deletion for everyone (REVOKE) of the message in key' },
);

export const MessageContent = Type.Object(
  {
    conversation: Type.Optional(Type.String({ description: 'plain text' })),
    extendedTextMessage: Type.Optional(Type.Object({ text: Str, contextInfo: Type.Optional(ContextInfo) })),
    imageMessage: Type.Optional(ImageMessage),
    videoMessage: Type.Optional(VideoMessage),
    ptvMessage: Type.Optional(Type.Object(VideoMessage.properties, { description: 'a video note (round, played in place): a video, downloaded as one' })),
    audioMessage: Type.Optional(AudioMessage),
    documentMessage: Type.Optional(DocumentMessage),
    stickerMessage: Type.Optional(StickerMessage),
    locationMessage: Type.Optional(
      Type.Object({ degreesLatitude: Type.Number(), degreesLongitude: Type.Number(), name: OptStr, address: OptStr }),
    ),
    contactMessage: Type.Optional(Type.Object({ displayName: Str, vcard: Str })),
    contactsArrayMessage: Type.Optional(Type.Object({ contacts: Type.Array(Type.Object({ displayName: Str, vcard: Str })) })),
    pollCreationMessage: Type.Optional(
      Type.Object({ name: Str, options: Type.Array(Type.Object({ optionName: Str })), selectableOptionsCount: Type.Integer({ minimum: 0 }) }),
    ),
    protocolMessage: Type.Optional(ProtocolMessage),
    albumMessage: Type.Optional(
      Type.Object(
        { expectedImageCount: Type.Integer({ minimum: 0 }), expectedVideoCount: Type.Integer({ minimum: 0 }), contextInfo: Type.Optional(ContextInfo) },
        { description: 'an album: its images and videos follow as messages of their own' },
      ),
    ),
    eventMessage: Type.Optional(
      Type.Object({
        name: Str,
        description: OptStr,
        startTime: Type.Optional(DateTime),
        endTime: Type.Optional(DateTime),
        location: Type.Optional(Type.Object({ degreesLatitude: Type.Number(), degreesLongitude: Type.Number(), name: OptStr, address: OptStr })),
        joinLink: OptStr,
        isCanceled: Type.Boolean(),
        contextInfo: Type.Optional(ContextInfo),
      }),
    ),
    groupInviteMessage: Type.Optional(
      Type.Object({
        groupJID: Str,
        inviteCode: Str,
        inviteExpiration: Type.Optional(DateTime),
        groupName: OptStr,
        caption: OptStr,
        contextInfo: Type.Optional(ContextInfo),
      }),
    ),
    pollUpdateMessage: Type.Optional(
      Type.Object(
        {
          pollCreationMessageKey: Type.Object({ ID: Type.String({ description: 'the poll voted on' }), remoteJID: Jid }),
          vote: Type.Optional(Type.Object({ encPayload: Type.String({ description: 'base64' }), encIV: Type.String({ description: 'base64' }) })),
        },
        { description: 'a vote, encrypted with the poll secret; PollVote beside Message has it decrypted' },
      ),
    ),
    listMessage: Type.Optional(
      Type.Object({
        description: Str,
        buttonText: Str,
        title: OptStr,
        footerText: OptStr,
        sections: Type.Array(Type.Object({ title: Str, rows: Type.Array(Type.Object({ rowID: Str, title: Str, description: OptStr })) })),
      }),
    ),
    reactionMessage: Type.Optional(
      Type.Object({
        key: Type.Object({
          ID: Type.String({ description: 'the message reacted to' }),
          remoteJID: Jid,
          fromMe: Type.Optional(Type.Boolean()),
          participant: Type.Optional(Type.String({ description: 'author of the message reacted to (groups)' })),
        }),
        text: Type.String({ description: 'the emoji; empty when the reaction was removed' }),
      }),
    ),
    buttonsMessage: Type.Optional(
      Type.Object({
        contentText: OptStr,
        footerText: OptStr,
        buttons: Type.Array(Type.Object({ buttonID: Str, buttonText: Type.Object({ displayText: Str }) })),
      }),
    ),
  },
  { description: 'exactly one of the fields is present' },
);

const MESSAGE_TYPES = MESSAGE_KINDS;
const MEDIA_TYPES = ['image', 'video', 'audio', 'document', 'sticker'] as const;

const MessageInfo = Type.Object({
  ID: Str,
  Chat: Jid,
  Sender: Jid,
  IsFromMe: Type.Boolean(),
  IsGroup: Type.Boolean(),
  PushName: Type.String({ description: 'display name of the sender; empty when unknown' }),
  Timestamp: DateTime,
  Type: Type.Union(MESSAGE_TYPES.map((t) => Type.Literal(t))),
  MediaType: Type.Optional(Type.Union(MEDIA_TYPES.map((t) => Type.Literal(t)))),
  AddressingMode: Type.Union([Type.Literal('pn'), Type.Literal('lid')], { description: 'how the network addressed the message: by phone number or by LID (always present)' }),
  ChatLID: Type.Optional(Type.String({ description: "the chat's LID, when known" })),
  SenderLID: Type.Optional(Type.String({ description: "the sender's LID, when known" })),
});

export const MessageEvent = Type.Object({
  Info: MessageInfo,
  Message: MessageContent,
  PollVote: Type.Optional(
    Type.Object(
      { poll_message_id: Str, selected_options: Type.Array(Str, { description: 'option names; empty when the voter withdrew the vote' }) },
      { description: 'a poll vote, decrypted by the gateway with the poll secret' },
    ),
  ),
});

const ReceiptStates = ['Delivered', 'Read', 'ReadSelf', 'Played', 'Failed'] as const;
const ReadReceiptEvent = Type.Object({
  MessageIDs: Type.Array(Str),
  Chat: Jid,
  Sender: Jid,
  Timestamp: DateTime,
  Error: Type.Optional(
    Type.Object(
      { code: Type.Integer({ description: "the network's error code, e.g. 463 (a restricted account or recipient)" }), reason: Str },
      { description: 'state Failed only: why the network refused the message after taking it' },
    ),
  ),
});

const ConnectedEvent = Type.Object({
  JID: Jid,
  Phone: Str,
  PushName: OptStr,
  Business: Type.Boolean(),
});

const DisconnectedEvent = Type.Object({
  Reason: Type.String({ description: 'connection_closed, connection_lost, timed_out, restart_required, replaced, client_outdated, logged_out, ...' }),
  Message: Type.Optional(Type.String({ description: 'why the session stopped and what to do, when it will not reconnect by itself' })),
  LoggedOut: Type.Boolean({ description: 'true when the device was unlinked: pair again to reconnect' }),
  StatusCode: Type.Optional(Type.Integer()),
  By: Type.Optional(Type.Union([Type.Literal('user'), Type.Literal('phone'), Type.Literal('network')])),
});

const PresenceEvent = Type.Object({
  From: Jid,
  Unavailable: Type.Boolean(),
  LastSeen: Type.Optional(DateTime),
});

const ChatPresenceEvent = Type.Object({
  Chat: Jid,
  Sender: Jid,
  State: Type.Union([Type.Literal('composing'), Type.Literal('recording'), Type.Literal('paused')]),
});

const HistorySyncEvent = Type.Object({
  SyncType: Str,
  Progress: Type.Optional(Type.Integer({ minimum: 0, maximum: 100, description: 'percent of the sync done' })),
  IsLatest: Type.Optional(Type.Boolean()),
  Conversations: Type.Array(
    Type.Object({
      ID: Jid,
      Name: OptStr,
      UnreadCount: Type.Optional(Type.Integer()),
      Archived: Type.Optional(Type.Boolean()),
      Pinned: Type.Optional(Type.Boolean()),
      LastMessageTimestamp: Type.Optional(DateTime),
      MessageCount: Type.Integer({ minimum: 0, description: 'messages of this conversation in this sync batch' }),
    }),
  ),
});

const GroupParticipantsEvent = Type.Object({
  JID: Type.String({ description: 'the group' }),
  Participants: Type.Array(Jid),
  Sender: Type.String({ description: 'who made the change; empty when the network did not say' }),
});

const envelopeFields = {
  id: Type.String({ pattern: '^evt_[0-9a-f]{32}$', description: 'the stored event id: idempotency key, also the webhook-id header' }),
  instance_id: Str,
  seq: Type.Integer({ minimum: 1, description: "the event's place in the instance's event sequence: strictly increasing per instance, the same on every channel (webhook, realtime stream, export); a gap is an event this channel does not carry or has not carried yet (order by seq)" }),
  created_at: Type.String({ format: 'date-time', description: 'when it happened' }),
};

/** CONTRACT.md's field order: `{id, type, instance_id, seq, created_at, event, state?}`. */
const body = <N extends string, E extends TSchema, X extends Record<string, TSchema> = Record<never, never>>(type: N, event: E, extra?: X) =>
  Type.Object({
    id: envelopeFields.id,
    type: Type.Literal(type),
    instance_id: envelopeFields.instance_id,
    seq: envelopeFields.seq,
    created_at: envelopeFields.created_at,
    event,
    ...(extra as X),
  });

export const WebhookBodies = {
  Message: body('Message', MessageEvent),
  ReadReceipt: body('ReadReceipt', ReadReceiptEvent, { state: Type.Union(ReceiptStates.map((s) => Type.Literal(s))) }),
  Connected: body('Connected', ConnectedEvent),
  Disconnected: body('Disconnected', DisconnectedEvent),
  Presence: body('Presence', PresenceEvent),
  ChatPresence: body('ChatPresence', ChatPresenceEvent),
  HistorySync: body('HistorySync', HistorySyncEvent),
  GroupParticipantsAdd: body('GroupParticipantsAdd', GroupParticipantsEvent),
  GroupParticipantsRemove: body('GroupParticipantsRemove', GroupParticipantsEvent),
} as const;

export type WebhookType = keyof typeof WebhookBodies;
export type MessageEvent = Static<typeof MessageEvent>;
export type MessageContent = Static<typeof MessageContent>;

/** The body minus what the reactor adds when it records the delivery. */
export type RenderedEvent = { [K in WebhookType]: Omit<Static<(typeof WebhookBodies)[K]>, keyof typeof envelopeFields> }[WebhookType];
