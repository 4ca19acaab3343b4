import type { ChatDoc } from '../../projections/chats/chats-projection.js';
import type { GroupDoc } from '../../projections/groups/groups-projection.js';

/** The connected account, as the group list needs it to say who is admin. */
export interface Self {
  jid?: string;
  lid?: string;
}

const bare = (jid: string | undefined) => (jid ? jid.replace(/:\d+@/, '@') : '');

/** The spec's Group, fields in order. */
export function presentGroup(g: GroupDoc, self: Self) {
  const mine = new Set([bare(self.jid), bare(self.lid)].filter(Boolean));
  const me = g.participants.find((p) => mine.has(bare(p.jid)) || mine.has(bare(p.phone_number)) || mine.has(bare(p.lid)));
  const isAdmin = me ? me.is_admin || me.is_super_admin : false;
  return {
    jid: g.jid,
    owner_jid: g.owner_jid,
    owner_pn: g.owner_pn,
    name: g.name,
    topic: g.topic,
    topic_deleted: g.topic_deleted,
    is_locked: g.is_locked,
    is_announce: g.is_announce,
    is_ephemeral: g.is_ephemeral,
    disappearing_timer: g.disappearing_timer,
    group_created: g.group_created,
    participant_count: g.participants.length,
    total_participants: g.participants.length,
    is_admin: isAdmin,
    invite_url: isAdmin && g.invite_code ? `https://chat.whatsapp.com/${g.invite_code}` : '',
    participants: g.participants.map((p) => ({
      jid: p.jid,
      phone_number: p.phone_number ?? '',
      lid: p.lid ?? '',
      is_admin: p.is_admin || p.is_super_admin,
      is_super_admin: p.is_super_admin,
      display_name: p.display_name ?? '',
      error: 0,
    })),
  };
}

/** The spec's Chat, fields in order. */
export function presentChat(c: ChatDoc) {
  return {
    phone: c.phone,
    jid: c.jid,
    name: c.name,
    last_message_user_name: c.last_message_user_name,
    last_message_user_phone: c.last_message_user_phone,
    community_name: c.community_name,
    community_jid: c.community_jid,
    archived: c.archived,
    pinned: c.pinned,
    unread: String(c.messages_unread),
    messages_unread: c.messages_unread,
    marked_as_unread: c.marked_as_unread,
    is_marked_spam: c.is_marked_spam,
    is_group: c.is_group,
    is_group_announcement: c.is_group_announcement,
    last_message_time: c.last_message_timestamp_ms > 0 ? new Date(c.last_message_timestamp_ms).toISOString() : '',
    last_message_timestamp_ms: c.last_message_timestamp_ms,
    mute_end_time: c.mute_end_time,
  };
}
