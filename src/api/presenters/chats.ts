import type { ChatDoc } from '../../projections/chats/chats-projection.js';
import type { GroupDoc } from '../../projections/groups/groups-projection.js';
import type { LidPairs } from '../../projections/groups/group-queries.js';

/** The connected account, as the group list needs it to say who is admin. */
export interface Self {
  jid?: string;
  lid?: string;
}

const USER = '@s.whatsapp.net';
const bare = (jid: string | undefined) => (jid ? jid.replace(/:\d+@/, '@') : '');
const isLid = (jid: string) => jid.endsWith('@lid');

/** Digits of a phone number given as digits or as a phone-number jid; '' for anything else. */
function digitsOf(value: string | undefined): string {
  if (!value) return '';
  if (/^\d+$/.test(value)) return value;
  return value.endsWith(USER) ? (bare(value).slice(0, -USER.length).match(/^\d+$/)?.[0] ?? '') : '';
}

/** A phone-number jid from digits or a jid (drivers differ in which they give). */
const pnJid = (value: string | undefined) => {
  const digits = digitsOf(value);
  return digits ? `${digits}${USER}` : '';
};

const noPairs: LidPairs = { pnByLid: new Map(), lidByPn: new Map() };

/** The LIDs and phone-number jids a group page names, for one lookup in the phone↔LID map. */
export function identitiesOf(groups: GroupDoc[]): { lids: string[]; pns: string[] } {
  const lids: string[] = [];
  const pns: string[] = [];
  for (const g of groups) {
    for (const id of [g.owner_jid, ...g.participants.flatMap((p) => [p.jid, p.lid ?? ''])]) if (isLid(id)) lids.push(bare(id));
    for (const p of g.participants) if (!p.lid) pns.push(pnJid(p.phone_number ?? p.jid));
  }
  return { lids, pns: pns.filter(Boolean) };
}

/**
 * The spec's Group, fields in order. Phone numbers are digits; a participant the group names by
 * LID gets its phone number (and one named by number its LID) from the instance's phone↔LID map.
 */
export function presentGroup(g: GroupDoc, self: Self, pairs: LidPairs = noPairs, inviteCode = '') {
  const participants = g.participants.map((p) => {
    const lid = bare(p.lid) || (isLid(p.jid) ? bare(p.jid) : '');
    const pn = pnJid(p.phone_number) || pnJid(p.jid) || (lid ? (pairs.pnByLid.get(lid) ?? '') : '');
    return {
      jid: p.jid,
      phone_number: digitsOf(pn),
      lid: lid || (pn ? (pairs.lidByPn.get(pn) ?? '') : ''),
      // A super admin is an admin too, as the network's own clients show.
      is_admin: p.is_admin || p.is_super_admin,
      is_super_admin: p.is_super_admin,
      display_name: p.display_name ?? '',
      error: 0,
    };
  });
  const mine = new Set([bare(self.jid), bare(self.lid)].filter(Boolean));
  const me = participants.find((p) => mine.has(bare(p.jid)) || mine.has(pnJid(p.phone_number)) || mine.has(p.lid));
  const isAdmin = me?.is_admin ?? false;
  const code = g.invite_code || inviteCode;
  const ownerLid = isLid(g.owner_jid) ? bare(g.owner_jid) : '';
  return {
    jid: g.jid,
    owner_jid: g.owner_jid,
    owner_pn: digitsOf(g.owner_pn) || digitsOf(g.owner_jid) || digitsOf(ownerLid ? pairs.pnByLid.get(ownerLid) : ''),
    name: g.name,
    topic: g.topic,
    topic_deleted: g.topic_deleted,
    is_locked: g.is_locked,
    is_announce: g.is_announce,
    is_ephemeral: g.is_ephemeral,
    disappearing_timer: g.disappearing_timer,
    group_created: g.group_created,
    participant_count: participants.length,
    total_participants: participants.length,
    is_admin: isAdmin,
    invite_url: isAdmin && code ? inviteUrl(code) : '',
    participants,
  };
}

export const inviteUrl = (code: string) => `https://chat.whatsapp.com/${code}`;

/** What a chat page needs besides the chats: the time (mutes expire) and the LIDs' numbers. */
export interface ChatContext {
  nowMs: number;
  pnByLid: Map<string, string>;
}

/**
 * `phone` as the send routes take it back: digits for a person, the phone number behind a LID
 * when known, the full jid otherwise (groups, unknown LIDs).
 */
function chatPhone(c: ChatDoc, ctx: ChatContext): string {
  if (c.jid.endsWith(USER)) return c.phone || digitsOf(c.jid);
  if (isLid(c.jid)) return digitsOf(ctx.pnByLid.get(bare(c.jid))) || c.jid;
  return c.jid;
}

/** Mute end in unix seconds, as chat/mute takes it: 0 when not muted (or expired), -1 forever. */
function muteEnd(ms: number, nowMs: number): number {
  if (ms < 0) return -1;
  return ms > nowMs ? Math.floor(ms / 1000) : 0;
}

/** The spec's Chat, fields in order. */
export function presentChat(c: ChatDoc, ctx: ChatContext) {
  return {
    phone: chatPhone(c, ctx),
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
    mute_end_time: muteEnd(c.mute_end_time, ctx.nowMs),
    labels: c.labels ?? [],
  };
}
