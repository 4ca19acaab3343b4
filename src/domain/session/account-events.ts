import { Type } from '@sinclair/typebox';

/**
 * What happens to the account itself rather than to its messages (CONTRACT.md, "Groups, contacts,
 * profile, privacy, labels, status posts"): group changes, contacts, block list, privacy, labels,
 * status posts. Stored on `session-<id>` beside the other session events; who did it is the
 * event's actor (the API's caller, or the network for what a phone or another admin did), and
 * `by` names the account on the network that did it when the network says so.
 */
const Str = Type.String();
const OptStr = Type.Optional(Type.String());

const Participant = Type.Object({
  jid: Str,
  phone_number: OptStr,
  lid: OptStr,
  is_admin: Type.Boolean(),
  is_super_admin: Type.Boolean(),
  display_name: OptStr,
});

/** The disappearing-message timers the network offers (seconds; 0 is off). */
export const DISAPPEARING_TIMERS = [0, 86_400, 604_800, 7_776_000] as const;

/** A group's settings as one change names them; only the fields that changed are present. */
export const GroupChanges = Type.Object({
  name: OptStr,
  topic: OptStr,
  topic_deleted: Type.Optional(Type.Boolean()),
  is_announce: Type.Optional(Type.Boolean()),
  is_locked: Type.Optional(Type.Boolean()),
  disappearing_timer: Type.Optional(Type.Integer({ minimum: 0 })),
  /** A new picture's id; '' when the picture was removed. */
  picture_id: OptStr,
});

/** The network's privacy settings, by the names the API uses. */
export const PRIVACY_SETTINGS = ['last_seen', 'online', 'profile_picture', 'about', 'groups', 'read_receipts'] as const;
export type PrivacySetting = (typeof PRIVACY_SETTINGS)[number];
/** The values the network takes for each setting (WhatsApp's own lists). */
export const PRIVACY_VALUES: Record<PrivacySetting, readonly string[]> = {
  last_seen: ['all', 'contacts', 'contact_blacklist', 'none'],
  online: ['all', 'match_last_seen'],
  profile_picture: ['all', 'contacts', 'contact_blacklist', 'none'],
  about: ['all', 'contacts', 'contact_blacklist', 'none'],
  groups: ['all', 'contacts', 'contact_blacklist'],
  read_receipts: ['all', 'none'],
};
export const PrivacySettings = Type.Object(Object.fromEntries(PRIVACY_SETTINGS.map((s) => [s, OptStr])) as Record<PrivacySetting, typeof OptStr>);

export const Label = Type.Object({
  id: Str,
  name: Str,
  /** The network's color index (0 to 19). */
  color: Type.Integer({ minimum: 0 }),
  deleted: Type.Optional(Type.Boolean()),
});

export const Contact = Type.Object({
  jid: Str,
  /** The person's LID when the network told it (`jid` is their phone jid whenever known). */
  lid: OptStr,
  /** The name the account saved for the person (address book). */
  name: OptStr,
  /** The name the person gave themselves. */
  push_name: OptStr,
  business_name: OptStr,
});

export const AccountEventSchemas = {
  /** A group this account created (through the API: the actor says who asked). */
  GroupCreated: Type.Object({
    group: Type.Object({
      jid: Str,
      owner_jid: OptStr,
      owner_pn: OptStr,
      name: Str,
      topic: OptStr,
      is_locked: Type.Boolean(),
      is_announce: Type.Boolean(),
      is_ephemeral: Type.Boolean(),
      disappearing_timer: Type.Integer(),
      created_s: Type.Optional(Type.Integer()),
      participants: Type.Array(Participant),
    }),
  }),
  /** Subject, description, settings, timer or picture changed; `by` the member who changed it. */
  GroupUpdated: Type.Object({ group: Str, changes: GroupChanges, by: OptStr }),
  GroupParticipantsPromoted: Type.Object({ group: Str, participants: Type.Array(Participant), by: OptStr }),
  GroupParticipantsDemoted: Type.Object({ group: Str, participants: Type.Array(Participant), by: OptStr }),
  /** The invite link was reset: the old code no longer lets anyone in (the code itself is not kept here). */
  GroupInviteRevoked: Type.Object({ group: Str, by: OptStr }),
  /** The account is no longer in the group (it left, or was removed): it leaves the group list. */
  GroupLeft: Type.Object({ group: Str, by: OptStr }),
  /** People the network or the address book told of (history sync, contact updates). */
  ContactsUpserted: Type.Object({ contacts: Type.Array(Contact) }),
  /** `set`: the whole block list, as the network sent it; `block` / `unblock`: these jids. */
  BlocklistUpdated: Type.Object({
    action: Type.Union([Type.Literal('set'), Type.Literal('block'), Type.Literal('unblock')]),
    jids: Type.Array(Str),
  }),
  /** Privacy settings that changed, or all of them as the network answered. */
  PrivacyUpdated: Type.Object({ settings: PrivacySettings }),
  /** Labels created, renamed, recolored or deleted (business accounts). */
  LabelsUpserted: Type.Object({ labels: Type.Array(Label) }),
  ChatLabeled: Type.Object({ chat: Str, label_id: Str, labeled: Type.Boolean() }),
  /** A status post of this account: to its contacts, or to `recipients`. */
  StatusPosted: Type.Object({
    message_id: Str,
    text: OptStr,
    media: Type.Optional(Type.Object({ kind: Type.Union([Type.Literal('image'), Type.Literal('video')]), mimetype: Str, file_length: Type.Integer({ minimum: 0 }), caption: OptStr })),
    background_color: OptStr,
    font: Type.Optional(Type.Integer({ minimum: 0 })),
    recipients: Type.Array(Str),
    timestamp_s: Type.Integer(),
  }),
} as const;
