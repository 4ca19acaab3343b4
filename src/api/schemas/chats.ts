import { Type } from '@sinclair/typebox';
import { Envelope } from './common.js';

export const GroupListQuery = Type.Object(
  {
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
    pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10 })),
  },
  { additionalProperties: false },
);

export const ChatListQuery = Type.Object(
  {
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
    page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  },
  { additionalProperties: false },
);

const Participant = Type.Object({
  jid: Type.String(),
  phone_number: Type.String(),
  lid: Type.String({ description: 'may be empty' }),
  is_admin: Type.Boolean(),
  is_super_admin: Type.Boolean(),
  display_name: Type.String(),
  error: Type.Integer(),
});

export const Group = Type.Object({
  jid: Type.String(),
  owner_jid: Type.String(),
  owner_pn: Type.String(),
  name: Type.String(),
  topic: Type.String(),
  topic_deleted: Type.Boolean(),
  is_locked: Type.Boolean(),
  is_announce: Type.Boolean(),
  is_ephemeral: Type.Boolean(),
  disappearing_timer: Type.Integer(),
  group_created: Type.String({ description: 'date-time; empty when unknown' }),
  participant_count: Type.Integer(),
  total_participants: Type.Integer(),
  is_admin: Type.Boolean({ description: 'whether the connected account is admin' }),
  invite_url: Type.String({ description: 'only when the connected account is admin and the link is known' }),
  participants: Type.Array(Participant),
});

export const GroupList = Envelope(
  Type.Object({ groups: Type.Array(Group), user_id: Type.Integer(), instance_id: Type.String() }),
);

const Chat = Type.Object({
  phone: Type.String(),
  jid: Type.String(),
  name: Type.String(),
  last_message_user_name: Type.String(),
  last_message_user_phone: Type.String(),
  community_name: Type.String(),
  community_jid: Type.String(),
  archived: Type.Boolean(),
  pinned: Type.Boolean(),
  unread: Type.String(),
  messages_unread: Type.Integer(),
  marked_as_unread: Type.Boolean(),
  is_marked_spam: Type.Boolean(),
  is_group: Type.Boolean(),
  is_group_announcement: Type.Boolean(),
  last_message_time: Type.String(),
  last_message_timestamp_ms: Type.Integer(),
  mute_end_time: Type.Integer(),
  labels: Type.Array(Type.String(), { description: "ids of the business account's labels on the chat (CONTRACT.md: chats carry labels)" }),
});

export const ChatPage = Type.Object({
  page: Type.Integer(),
  page_size: Type.Integer(),
  total: Type.Integer(),
  total_pages: Type.Integer(),
  content: Type.Array(Chat),
});
