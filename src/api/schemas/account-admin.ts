import { Type } from '@sinclair/typebox';
import { DISAPPEARING_TIMERS, PRIVACY_SETTINGS, PRIVACY_VALUES } from '../../domain/session/account-events.js';
import { Envelope } from './common.js';
import { Group } from './chats.js';

/** Schemas of CONTRACT.md's "Groups, contacts, profile, privacy, labels, status posts". */
const Person = Type.String({ minLength: 1, maxLength: 128, description: 'digits with country code, or a user jid / LID', example: '5511999990001' });
const Picture = Type.Object(
  { data: Type.String({ minLength: 1, description: 'the picture, base64: JPEG or PNG (read from the bytes), at most 5 MiB; sized to 640x640' }) },
  { additionalProperties: false },
);

export const GroupParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }), jid: Type.String({ minLength: 1, maxLength: 128, description: 'a group jid (<digits>@g.us)' }) });
export const ContactParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }), jid: Type.String({ minLength: 1, maxLength: 128, description: 'digits, a user jid or a LID' }) });

export const CreateGroupBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 100 }), participants: Type.Array(Person, { minItems: 1, maxItems: 1023 }) },
  { additionalProperties: false },
);
export const PatchGroupBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    topic: Type.Optional(Type.String({ maxLength: 2048, description: '"" removes the description' })),
    is_announce: Type.Optional(Type.Boolean({ description: 'only admins send' })),
    is_locked: Type.Optional(Type.Boolean({ description: 'only admins edit the group' })),
    disappearing_timer: Type.Optional(Type.Integer({ description: `seconds, one of ${DISAPPEARING_TIMERS.join(', ')} (0 is off)` })),
  },
  { additionalProperties: false },
);
export const ParticipantsBody = Type.Object(
  {
    action: Type.Union([Type.Literal('add'), Type.Literal('remove'), Type.Literal('promote'), Type.Literal('demote')]),
    participants: Type.Array(Person, { minItems: 1, maxItems: 1023 }),
  },
  { additionalProperties: false },
);
export const ParticipantsAnswer = Envelope(
  Type.Object({
    participants: Type.Array(
      Type.Object({
        jid: Type.String(),
        phone_number: Type.String({ description: 'digits, as asked' }),
        status: Type.Integer({ description: "the network's answer for this person: 200 done, 403 not allowed, 408 not on the network or not a member, 409 already so" }),
      }),
    ),
  }),
);
export const GroupAnswer = Envelope(Group);
export const InviteAnswer = Envelope(Type.Object({ invite_url: Type.String() }));
export const InviteQuery = Type.Object({ invite_url: Type.String({ minLength: 1, maxLength: 256 }) }, { additionalProperties: false });
export const JoinBody = Type.Object({ invite_url: Type.String({ minLength: 1, maxLength: 256 }) }, { additionalProperties: false });
export const JidAnswer = Envelope(Type.Object({ jid: Type.String() }));
export const PictureBody = Type.Object({ media: Picture }, { additionalProperties: false });
export const PictureAnswer = Envelope(Type.Object({ profile_picture_id: Type.String() }));

export const ContactsQuery = Type.Object(
  {
    page: Type.Optional(Type.Integer({ minimum: 1, default: 1 })),
    size: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    query: Type.Optional(Type.String({ maxLength: 100, description: 'matches names, number or jid, case-insensitively' })),
  },
  { additionalProperties: false },
);
const ContactItem = Type.Object({
  jid: Type.String(),
  phone: Type.String({ description: "digits; '' while only the LID is known" }),
  lid: Type.Optional(Type.String()),
  name: Type.Optional(Type.String({ description: "saved in the account's address book" })),
  push_name: Type.Optional(Type.String({ description: 'what the person calls themselves' })),
  business_name: Type.Optional(Type.String()),
  blocked: Type.Boolean(),
});
export const ContactsPage = Envelope(
  Type.Object({ page: Type.Integer(), size: Type.Integer(), total: Type.Integer(), total_pages: Type.Integer(), content: Type.Array(ContactItem) }),
);
export const ContactAnswer = Envelope(
  Type.Object({
    jid: Type.String(),
    phone: Type.String(),
    lid: Type.Optional(Type.String()),
    push_name: Type.Optional(Type.String()),
    about: Type.Optional(Type.String()),
    profile_picture_url: Type.Optional(Type.String()),
    business_profile: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  }),
);
export const BlockBody = Type.Object({ phone: Person, blocked: Type.Boolean() }, { additionalProperties: false });
export const BlockAnswer = Envelope(Type.Object({ blocked: Type.Boolean() }));
export const BlocklistAnswer = Envelope(Type.Object({ jids: Type.Array(Type.String()) }));

export const ProfileBody = Type.Object(
  { push_name: Type.Optional(Type.String({ minLength: 1, maxLength: 25 })), about: Type.Optional(Type.String({ maxLength: 139 })) },
  { additionalProperties: false },
);

const privacyValue = (name: (typeof PRIVACY_SETTINGS)[number]) =>
  Type.Optional(Type.String({ description: `one of ${PRIVACY_VALUES[name].join(', ')}`, maxLength: 32 }));
export const PrivacyBody = Type.Object(Object.fromEntries(PRIVACY_SETTINGS.map((s) => [s, privacyValue(s)])), { additionalProperties: false });
export const PrivacyAnswer = Envelope(Type.Object(Object.fromEntries(PRIVACY_SETTINGS.map((s) => [s, Type.Optional(Type.String())]))));

export const LabelsAnswer = Envelope(Type.Object({ labels: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), color: Type.Integer() })) }));
export const LabelChatBody = Type.Object({ phone: Person, label_id: Type.String({ minLength: 1, maxLength: 64 }), labeled: Type.Boolean() }, { additionalProperties: false });

export const StatusBody = Type.Object(
  {
    text: Type.Optional(Type.String({ minLength: 1, maxLength: 700, description: 'the post, or the caption of its media' })),
    media: Type.Optional(
      Type.Object(
        { data: Type.String({ minLength: 1, description: 'base64 of an image (JPEG, PNG, WebP) or an MP4 video, read from the bytes; at most 16 MiB' }), mimetype: Type.Optional(Type.String({ maxLength: 255 })) },
        { additionalProperties: false },
      ),
    ),
    background_color: Type.Optional(Type.String({ pattern: '^#[0-9A-Fa-f]{6}$', description: 'text posts' })),
    font: Type.Optional(Type.Integer({ minimum: 0, maximum: 9, description: 'text posts' })),
    recipients: Type.Optional(Type.Array(Person, { minItems: 1, maxItems: 5000, description: "who sees it; default: the account's contacts" })),
  },
  { additionalProperties: false },
);
export const MessageIdAnswer = Envelope(Type.Object({ message_id: Type.String() }));
