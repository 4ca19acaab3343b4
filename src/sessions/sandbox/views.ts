import type { NetworkMessage, SessionEventData } from '../../domain/session/events.js';
import { userJid } from './addresses.js';
import type { InboxEntry } from './schemas.js';
import type { GroupDoc, GroupMember, MessageDoc } from './state.js';

type GroupInfo = SessionEventData<'GroupsUpserted'>['groups'][number];
type GroupParticipant = GroupInfo['participants'][number];

/** The chat a message belongs to, as `viewer` sees it: the group, or the other party. */
export function chatOf(message: MessageDoc, viewer: string): string {
  if (message.group) return message.group;
  if (message.from !== viewer) return userJid(message.from);
  return userJid(message.recipients[0] ?? viewer);
}

/** How the sender appears when it uses privacy addressing (LID), as the network tells instances. */
export interface SenderIdentity {
  lid: string;
  addressing: 'pn' | 'lid';
}

/**
 * A stored message as the network hands it to the device of `viewer`. A LID-addressed sender's
 * messages come with its LID and its phone jid as the alternate: the driver keys them by the
 * phone jid, with the LIDs beside (CONTRACT.md, "Addresses"), as the Baileys driver does.
 */
export function networkMessage(message: MessageDoc, viewer: string, sender?: SenderIdentity): NetworkMessage {
  const chat = chatOf(message, viewer);
  const out: NetworkMessage = {
    id: message._id,
    chat,
    sender: userJid(message.from),
    from_me: message.from === viewer,
    is_group: message.group !== undefined,
    push_name: message.push_name,
    timestamp_s: message.timestamp_s,
    type: message.type,
  };
  if (message.text !== undefined) out.text = message.text;
  if (message.reply_to !== undefined) out.reply_to = message.reply_to;
  if (message.media !== undefined) out.media = message.media;
  if (message.reaction !== undefined) {
    // The key names the reacted message as this viewer knows it: its own, or (groups) by author.
    const { author, ...reaction } = message.reaction;
    out.reaction = author === undefined ? reaction : { ...reaction, from_me: author === viewer, ...(message.group !== undefined && author !== viewer ? { participant: userJid(author) } : {}) };
  }
  if (message.buttons !== undefined) out.buttons = message.buttons;
  if (message.location !== undefined) out.location = message.location;
  if (message.contacts !== undefined) out.contacts = message.contacts;
  if (message.poll !== undefined) out.poll = message.poll;
  if (message.edit !== undefined) out.edit = message.edit;
  if (message.revoke !== undefined) out.revoke = { ...message.revoke, from_me: message.from === viewer };
  if (message.poll_vote !== undefined) out.poll_vote = { ...message.poll_vote };
  if (message.list !== undefined) out.list = message.list;
  if (message.mentions !== undefined) out.mentions = message.mentions;
  if (message.view_once) out.view_once = true;
  if (message.forwarded) out.forwarded = true;
  if (message.link_preview !== undefined) out.link_preview = message.link_preview;
  if (sender && message.from !== viewer) {
    out.sender_pn = out.sender;
    out.sender_lid = sender.lid;
    // A group is addressed by LID as a whole; a 1:1 chat by how its peer is addressed.
    out.addressing_mode = message.group !== undefined ? 'lid' : sender.addressing;
    if (message.group === undefined && sender.addressing === 'lid') out.chat_lid = sender.lid;
    // Before the network shares the pair, the LID is all there is: the chat and sender are the LID.
    if (message.lid_only && message.group === undefined) {
      out.chat = sender.lid;
      out.sender = sender.lid;
      delete out.sender_pn;
    }
  }
  // Always said, as the real network's driver does: a group is addressed by LID, a 1:1 chat by phone number unless its peer's is hidden.
  out.addressing_mode ??= message.group !== undefined ? 'lid' : 'pn';
  return out;
}

/** Edits and deletions for everyone, as the phone applies them to the messages they change. */
export interface Changes {
  edited: Map<string, string>;
  revoked: Set<string>;
}

/** The changes among a phone's messages (the latest edit of each message wins: they come in order). */
export function changesOf(messages: MessageDoc[]): Changes {
  const edited = new Map<string, string>();
  const revoked = new Set<string>();
  for (const m of messages) {
    if (m.type === 'edit' && m.edit) edited.set(m.edit.message_id, m.text ?? '');
    if (m.type === 'revoke' && m.revoke) revoked.add(m.revoke.message_id);
  }
  return { edited, revoked };
}

/** A received message as the phone shows it: media by its kind, changes applied (SANDBOX.md, "What phones see"). */
export function inboxEntry(message: MessageDoc, viewer: string, changes: Changes = { edited: new Map(), revoked: new Set() }): InboxEntry {
  const type = message.type === 'media' && message.media ? message.media.kind : message.type;
  const out: InboxEntry = {
    message_id: message._id,
    from: userJid(message.from),
    chat: chatOf(message, viewer),
    type: type as InboxEntry['type'],
    revoked: changes.revoked.has(message._id),
    timestamp: message.sent_at,
  };
  if (message.text !== undefined) out.text = message.text;
  if (message.reply_to !== undefined) out.reply_to = message.reply_to;
  if (message.mentions !== undefined) out.mentions = message.mentions;
  if (message.link_preview !== undefined) out.link_preview = message.link_preview;
  if (message.media !== undefined) {
    const m = message.media;
    out.media = { kind: m.kind, mimetype: m.mimetype, url: m.url, file_length: m.file_length, sha256: Buffer.from(m.file_sha256, 'base64').toString('hex') };
    if (m.file_name !== undefined) out.media.file_name = m.file_name;
    if (m.caption !== undefined) {
      out.media.caption = m.caption;
      out.caption = m.caption;
    }
    if (m.seconds !== undefined) out.media.seconds = m.seconds;
    if (m.kind === 'audio') out.media.voice = m.ptt === true;
    if (m.waveform !== undefined) out.media.waveform = Buffer.from(m.waveform, 'base64').length > 0;
    if (m.gif) out.media.gif = true;
  }
  if (message.location !== undefined) out.location = message.location;
  if (message.contacts !== undefined) out.contacts = message.contacts;
  if (message.poll !== undefined) out.poll = { name: message.poll.name, options: message.poll.options, selectable_count: message.poll.selectable_count };
  if (message.list !== undefined) out.list = message.list;
  if (message.buttons !== undefined) out.buttons = message.buttons;
  if (message.reaction !== undefined) out.reaction = { message_id: message.reaction.message_id, text: message.reaction.text };
  if (message.view_once) out.view_once = true;
  if (message.forwarded) out.forwarded = true;
  const edited = changes.edited.get(message._id);
  if (edited !== undefined) out.edited_text = edited;
  return out;
}

/**
 * How participant lists appear in events. A LID-addressed phone is named by its LID with its
 * phone jid as the alternate, as Baileys 7 reports such participants; others by phone number.
 */
export function participant(member: GroupMember): GroupParticipant {
  return {
    jid: member.lid ?? userJid(member.phone),
    phone_number: member.lid ? userJid(member.phone) : member.phone,
    lid: member.lid ?? '',
    is_admin: member.is_admin,
    is_super_admin: member.is_super_admin,
  };
}

export function groupInfo(group: GroupDoc): GroupInfo {
  const info: GroupInfo = {
    jid: group._id,
    owner_jid: userJid(group.owner),
    owner_pn: group.owner,
    name: group.name,
    is_locked: group.locked,
    is_announce: group.announce,
    is_ephemeral: group.ephemeral_seconds > 0,
    disappearing_timer: group.ephemeral_seconds,
    created_s: group.created_s,
    participants: group.participants.map(participant),
  };
  if (group.topic !== undefined) info.topic = group.topic;
  return info;
}
