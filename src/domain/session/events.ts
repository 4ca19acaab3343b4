import { Type, type Static } from '@sinclair/typebox';
import { AccountEventSchemas } from './account-events.js';

/**
 * What happens on an instance's session, as stored in `session-<id>`. Both drivers (Baileys,
 * sandbox) produce exactly these through their translators; nothing above the port knows which
 * driver ran. Jids are network identifiers (`<digits>@s.whatsapp.net`, `<id>@g.us`, `<id>@lid`);
 * byte fields are base64; times are ISO strings unless named `_s` (unix seconds).
 */
export const sessionStream = (instanceId: string) => `session-${instanceId}`;

export const DISCONNECT_REASONS = [
  'connection_closed',
  /** The network refused the announced client version (405): WHATSAPP_VERSION must change. */
  'client_outdated',
  'connection_lost',
  'timed_out',
  'restart_required',
  'unavailable',
  'replaced',
  'logged_out',
  'bad_session',
  'multidevice_mismatch',
  'forbidden',
  'unknown',
] as const;
export type DisconnectReason = (typeof DISCONNECT_REASONS)[number];

const Str = Type.String();
const OptStr = Type.Optional(Type.String());

const BusinessProfile = Type.Object({
  business_hours_timezone: OptStr,
  categories: Type.Optional(Type.Array(Type.Object({ id: Str, name: Str }))),
  profile_options: Type.Optional(Type.Record(Str, Str)),
  address: OptStr,
  email: OptStr,
  website: OptStr,
  description: OptStr,
});

export const Media = Type.Object({
  kind: Type.Union([Type.Literal('image'), Type.Literal('video'), Type.Literal('audio'), Type.Literal('document'), Type.Literal('sticker')]),
  url: Str,
  direct_path: OptStr,
  media_key: Str,
  file_enc_sha256: OptStr,
  file_sha256: Str,
  file_length: Type.Integer({ minimum: 0 }),
  mimetype: Str,
  caption: OptStr,
  file_name: OptStr,
  seconds: Type.Optional(Type.Integer()),
  ptt: Type.Optional(Type.Boolean()),
  /** A video note (round, played in place): the network's ptvMessage. */
  ptv: Type.Optional(Type.Boolean()),
  width: Type.Optional(Type.Integer()),
  height: Type.Optional(Type.Integer()),
  /** Voice notes: 64 loudness samples (0-100), base64, drawn under the note. */
  waveform: OptStr,
  /** A video that plays as a GIF (looped, muted). */
  gif: Type.Optional(Type.Boolean()),
  /** Small JPEG preview (images, videos), base64: kept so a re-send or forward shows it. */
  thumbnail: OptStr,
});

export const MESSAGE_KINDS = ['text', 'media', 'reaction', 'buttons', 'location', 'contact', 'poll', 'edit', 'revoke', 'other', 'list', 'poll_vote'] as const;

export const Location = Type.Object({ latitude: Type.Number(), longitude: Type.Number(), name: OptStr, address: OptStr });
export const ContactCard = Type.Object({ display_name: Str, vcard: Str });
export const PollContent = Type.Object({ name: Str, options: Type.Array(Str), selectable_count: Type.Integer({ minimum: 0 }) });
/** A list card: `text` is its body; a tap on a row answers with the row's id. */
export const ListContent = Type.Object({
  button_text: Str,
  title: OptStr,
  footer: OptStr,
  sections: Type.Array(Type.Object({ title: Str, rows: Type.Array(Type.Object({ id: Str, title: Str, description: OptStr })) })),
});

/**
 * A vote on a poll, as the network carries it (encrypted with the poll's secret) and, once the
 * gateway has decrypted it with the secret kept in the poll's stored creation event,
 * `selected_options` (names; empty when the voter withdrew the vote). `creator_jid` and `voter_jid`
 * are the identities the network's encryption binds the vote to.
 */
export const PollVote = Type.Object({
  poll_message_id: Str,
  creator_jid: OptStr,
  voter_jid: OptStr,
  enc_payload: OptStr,
  enc_iv: OptStr,
  selected_options: Type.Optional(Type.Array(Str)),
  /** Why it could not be decrypted (the poll is not in the log, or its secret is unknown). */
  undecrypted: OptStr,
});

/**
 * One message as the network carries it, whichever direction. `chat` and `sender` are phone-number
 * jids whenever the mapping from the LID is known (CONTRACT.md, Webhooks, "Addresses"), the LID
 * otherwise; the LIDs stand beside them.
 */
/** What a text's first link shows in the chat (fetched by the gateway under the outbound-safety rules). */
export const LinkPreview = Type.Object({ url: Str, title: Str, description: OptStr });

export const NetworkMessage = Type.Object({
  id: Str,
  chat: Str,
  /** The chat's LID when known (1:1 chats). */
  chat_lid: OptStr,
  /** How the network addressed the message: by phone number, or by LID (privacy addressing). */
  addressing_mode: Type.Optional(Type.Union([Type.Literal('pn'), Type.Literal('lid')])),
  sender: Str,
  /** Phone-number jid of the sender when the network gave one (LID-addressed chats). */
  sender_pn: OptStr,
  /** LID of the sender when known. */
  sender_lid: OptStr,
  from_me: Type.Boolean(),
  is_group: Type.Boolean(),
  push_name: OptStr,
  timestamp_s: Type.Integer(),
  type: Type.Union(MESSAGE_KINDS.map((k) => Type.Literal(k))),
  text: OptStr,
  reply_to: OptStr,
  /** The quoted message of a reply, as the network carries it inside the reply. */
  quoted: Type.Optional(Type.Object({ sender: OptStr, text: OptStr })),
  location: Type.Optional(Location),
  contacts: Type.Optional(Type.Array(ContactCard)),
  /** `message_secret`: the poll's 32-byte secret, base64, which its votes are encrypted with. */
  poll: Type.Optional(Type.Composite([PollContent, Type.Object({ message_secret: OptStr })])),
  poll_vote: Type.Optional(PollVote),
  list: Type.Optional(ListContent),
  /** Jids the message mentions. */
  mentions: Type.Optional(Type.Array(Str)),
  forwarded: Type.Optional(Type.Boolean()),
  /** A text's link preview, as sent. */
  link_preview: Type.Optional(LinkPreview),
  view_once: Type.Optional(Type.Boolean()),
  /** An edit for everyone: the edited message and its new text (`text`). */
  edit: Type.Optional(Type.Object({ message_id: Str })),
  /** A deletion for everyone: the deleted message. */
  revoke: Type.Optional(Type.Object({ message_id: Str, from_me: Type.Optional(Type.Boolean()), participant: OptStr })),
  media: Type.Optional(Media),
  /** `participant`: the author of the reacted message (groups); `from_me`: it was ours. */
  reaction: Type.Optional(Type.Object({ message_id: Str, text: Str, from_me: Type.Optional(Type.Boolean()), participant: OptStr })),
  buttons: Type.Optional(
    Type.Object({ footer: OptStr, items: Type.Array(Type.Object({ id: Str, text: Str })) }),
  ),
  /** An album: how many images and videos follow, each as a message of its own (type other). */
  album: Type.Optional(Type.Object({ images: Type.Integer({ minimum: 0 }), videos: Type.Integer({ minimum: 0 }) })),
  /** An event (a meeting on the calendar): times in unix seconds (type other). */
  event: Type.Optional(
    Type.Object({
      name: Str,
      description: OptStr,
      start_s: Type.Optional(Type.Integer()),
      end_s: Type.Optional(Type.Integer()),
      location: Type.Optional(Type.Object({ latitude: Type.Number(), longitude: Type.Number(), name: OptStr, address: OptStr })),
      join_link: OptStr,
      canceled: Type.Optional(Type.Boolean()),
    }),
  ),
  /** An invitation to join a group, by its code (type other). */
  group_invite: Type.Optional(Type.Object({ group: Str, code: Str, expires_s: Type.Optional(Type.Integer()), group_name: OptStr, caption: OptStr })),
});
export type NetworkMessage = Static<typeof NetworkMessage>;

/** What every outgoing kind may carry: a quoted message of the chat, people mentioned, typing shown first. */
const outgoingCommon = {
  /** The quoted message's id (same chat). */
  reply_to: OptStr,
  /** Jids mentioned (notified). */
  mentions: Type.Optional(Type.Array(Str)),
  /** Typing (recording for a voice note) shown this long before the send. */
  delay_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 20_000 })),
};

/**
 * What an instance sends, as the log keeps a send that goes out later (SendQueued, SendScheduled)
 * and as the drivers take it (src/domain/session/outgoing.ts). Media is already uploaded: the
 * event keeps what the send needs, never the bytes, so a send fired after a restart or on another
 * node needs nothing but the event. Addresses are jids.
 */
export const OutgoingContent = Type.Union([
  /** `preview`: the first link's, fetched when the send was asked for (unless link_preview is false). */
  Type.Object({ kind: Type.Literal('text'), text: Str, link_preview: Type.Optional(Type.Boolean()), preview: Type.Optional(LinkPreview), ...outgoingCommon }),
  Type.Object({ kind: Type.Literal('buttons'), text: OptStr, footer: OptStr, buttons: Type.Array(Type.Object({ id: Str, text: Str })), ...outgoingCommon }),
  /** `media.caption`, `media.ptt` (voice note), `media.gif` say how it shows. */
  Type.Object({ kind: Type.Literal('media'), media: Media, view_once: Type.Optional(Type.Boolean()), ...outgoingCommon }),
  Type.Object({ kind: Type.Literal('location'), location: Location, ...outgoingCommon }),
  Type.Object({ kind: Type.Literal('contact'), contacts: Type.Array(ContactCard), ...outgoingCommon }),
  /** The poll's secret is drawn by the driver when it goes out (MessageSent carries it). */
  Type.Object({ kind: Type.Literal('poll'), poll: PollContent, ...outgoingCommon }),
  Type.Object({ kind: Type.Literal('list'), text: Str, list: ListContent, ...outgoingCommon }),
  /** A stored message (any chat, media by reference) sent on, shown as forwarded. */
  Type.Object({ kind: Type.Literal('forward'), message: NetworkMessage, delay_ms: outgoingCommon.delay_ms }),
]);

const ChatInfo = Type.Object({
  jid: Str,
  name: OptStr,
  archived: Type.Optional(Type.Boolean()),
  pinned: Type.Optional(Type.Boolean()),
  /** Unix ms until which the chat is muted; 0 or absent when not muted, -1 forever. */
  mute_end_ms: Type.Optional(Type.Integer()),
  /** Absolute count from the network (history, chat upserts). */
  unread_count: Type.Optional(Type.Integer()),
  marked_as_unread: Type.Optional(Type.Boolean()),
  is_marked_spam: Type.Optional(Type.Boolean()),
  last_message_s: Type.Optional(Type.Integer()),
  community_jid: OptStr,
  read_only: Type.Optional(Type.Boolean()),
});

const GroupParticipant = Type.Object({
  jid: Str,
  phone_number: OptStr,
  lid: OptStr,
  is_admin: Type.Boolean(),
  is_super_admin: Type.Boolean(),
  display_name: OptStr,
});

const GroupInfo = Type.Object({
  jid: Str,
  owner_jid: OptStr,
  owner_pn: OptStr,
  name: Str,
  topic: OptStr,
  topic_deleted: Type.Optional(Type.Boolean()),
  is_locked: Type.Boolean(),
  is_announce: Type.Boolean(),
  is_ephemeral: Type.Boolean(),
  disappearing_timer: Type.Integer(),
  created_s: Type.Optional(Type.Integer()),
  is_community: Type.Optional(Type.Boolean()),
  community_jid: OptStr,
  invite_code: OptStr,
  participants: Type.Array(GroupParticipant),
});

export const SessionEventSchemas = {
  SessionPairingStarted: Type.Object({ method: Type.Union([Type.Literal('qr'), Type.Literal('code')]) }),
  SessionConnected: Type.Object({
    jid: Str,
    phone: Str,
    push_name: OptStr,
    lid: OptStr,
    platform: OptStr,
    business: Type.Boolean(),
  }),
  SessionDisconnected: Type.Object({
    reason: Type.Union(DISCONNECT_REASONS.map((r) => Type.Literal(r))),
    status_code: Type.Optional(Type.Integer()),
    /** What an operator reads: why it stopped and what to do (a refused version names itself). */
    message: OptStr,
  }),
  SessionLoggedOut: Type.Object({ by: Type.Union([Type.Literal('user'), Type.Literal('phone'), Type.Literal('network')]) }),
  ProfileUpdated: Type.Object({
    push_name: OptStr,
    about: OptStr,
    picture_id: OptStr,
    picture_url: OptStr,
    verified_name: OptStr,
    business_name: OptStr,
    business: Type.Optional(BusinessProfile),
  }),
  MessageReceived: Type.Object({ message: NetworkMessage, upsert: Type.Union([Type.Literal('notify'), Type.Literal('append')]) }),
  MessageSent: Type.Object({
    message: NetworkMessage,
    /** Where it came from: our API, the phone (or another linked device) itself, or a helpdesk agent's answer. */
    origin: Type.Union([Type.Literal('api'), Type.Literal('device'), Type.Literal('helpdesk')]),
    /** What the driver did where the network would not render the request as asked. */
    fallback: OptStr,
  }),
  ReceiptReceived: Type.Object({
    message_ids: Type.Array(Str),
    chat: Str,
    sender: Str,
    /**
     * Played: a voice note (or video) was played. Failed: the network took the message, then
     * refused it (`error`, e.g. 463 for a restricted account or recipient).
     */
    state: Type.Union([Type.Literal('Delivered'), Type.Literal('Read'), Type.Literal('ReadSelf'), Type.Literal('Played'), Type.Literal('Failed')]),
    timestamp_s: Type.Integer(),
    error: Type.Optional(Type.Object({ code: Type.Integer(), reason: Str })),
  }),
  PresenceUpdated: Type.Object({
    jid: Str,
    state: Type.Union([Type.Literal('available'), Type.Literal('unavailable')]),
    last_seen_s: Type.Optional(Type.Integer()),
  }),
  ChatPresenceUpdated: Type.Object({
    chat: Str,
    sender: Str,
    state: Type.Union([Type.Literal('composing'), Type.Literal('recording'), Type.Literal('paused')]),
  }),
  HistorySyncReceived: Type.Object({
    sync_type: Str,
    progress: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
    is_latest: Type.Optional(Type.Boolean()),
    chats: Type.Array(ChatInfo),
    messages: Type.Array(NetworkMessage),
  }),
  ChatsUpserted: Type.Object({ chats: Type.Array(ChatInfo) }),
  ChatUpdated: Type.Object({
    jid: Str,
    /** Only the fields that changed. `unread_delta` adds to the count; `unread_count` replaces it. */
    changes: Type.Object({
      name: OptStr,
      archived: Type.Optional(Type.Boolean()),
      pinned: Type.Optional(Type.Boolean()),
      mute_end_ms: Type.Optional(Type.Integer()),
      unread_count: Type.Optional(Type.Integer()),
      unread_delta: Type.Optional(Type.Integer()),
      marked_as_unread: Type.Optional(Type.Boolean()),
      is_marked_spam: Type.Optional(Type.Boolean()),
      last_message_s: Type.Optional(Type.Integer()),
      cleared: Type.Optional(Type.Boolean()),
      deleted: Type.Optional(Type.Boolean()),
    }),
  }),
  GroupsUpserted: Type.Object({ groups: Type.Array(GroupInfo) }),
  GroupParticipantsAdded: Type.Object({ group: Str, participants: Type.Array(GroupParticipant), by: OptStr }),
  GroupParticipantsRemoved: Type.Object({ group: Str, participants: Type.Array(GroupParticipant), by: OptStr }),
  /** Phone↔LID pairs the network revealed; replies to LID-only senders need them. */
  LidMappingLearned: Type.Object({ pairs: Type.Array(Type.Object({ pn: Str, lid: Str })) }),
  CallRejected: Type.Object({ call_id: Str, from: Str }),
  /** A send that waits for its turn (send pacing); it goes out under `message_id`, in order. */
  SendQueued: Type.Object({ message_id: Str, to: Str, content: OutgoingContent }),
  /**
   * A queued or scheduled send given up: the network refused it for good (not on WhatsApp, an
   * unknown address), or it kept failing or the session stayed down past the horizon. `to`, `code`
   * (the network's error code, else the HTTP status of the same error) and `timestamp_s` are on
   * every one recorded since they became the ReadReceipt Failed webhook; older ones lack them.
   */
  SendAbandoned: Type.Object({ message_id: Str, reason: Str, to: OptStr, code: Type.Optional(Type.Integer()), timestamp_s: Type.Optional(Type.Integer()) }),
  /** A send asked for at a later time (`send_at`, ISO); it goes out under `message_id` then, once. */
  SendScheduled: Type.Object({ message_id: Str, to: Str, content: OutgoingContent, send_at: Str }),
  /** A scheduled or queued send called off before it went out. */
  SendCanceled: Type.Object({ message_id: Str, was: Type.Union([Type.Literal('scheduled'), Type.Literal('queued')]) }),
  /** Groups, contacts, block list, privacy, labels and status posts: account-events.ts. */
  ...AccountEventSchemas,
} as const;

type Schemas = typeof SessionEventSchemas;
export type SessionEventType = keyof Schemas;
export type SessionEvent = { [K in SessionEventType]: { type: K; data: Static<Schemas[K]> } }[SessionEventType];
export type SessionEventData<K extends SessionEventType> = Static<Schemas[K]>;
