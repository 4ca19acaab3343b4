import type { ChatModification, LastMessageList, MinimalMessage } from '@whiskeysockets/baileys';
import type { ChatAction, MessageRef } from '../port.js';
import { isGroupJid } from './jid.js';
import { toJid } from '../../domain/session/phone-numbers.js';

/**
 * Our chat actions as Baileys' app-state modifications. Archive, read state, clear and delete
 * carry the chat's newest message as their range: the phone and other linked devices apply the
 * action up to that message. When we know none (a chat we never saw a message in), the range is
 * empty, which the network takes as "the whole chat as you have it".
 */
export function chatModification(chat: string, action: ChatAction): ChatModification {
  switch (action.type) {
    case 'archive':
      return { archive: action.archived, lastMessages: range(chat, action.last) };
    case 'pin':
      return { pin: action.pinned };
    case 'mute':
      // The app-state mute action stores an absolute end (ms, -1 = always); null unmutes.
      return { mute: action.until_ms === 0 ? null : action.until_ms };
    case 'mark_unread':
      return { markRead: !action.unread, lastMessages: range(chat, action.last) };
    case 'delete_message':
      return { deleteForMe: { deleteMedia: true, key: keyOf(chat, action.message), timestamp: action.message.timestamp_s } };
    case 'delete_chat':
      return { delete: true, lastMessages: range(chat, action.last) };
    case 'clear':
      return { clear: true, lastMessages: range(chat, action.last) };
  }
}

function keyOf(chat: string, ref: MessageRef): MinimalMessage['key'] {
  const remoteJid = toJid(chat);
  // Baileys refuses a group message not from us without its author.
  const participant = isGroupJid(remoteJid) && !ref.from_me && ref.participant ? toJid(ref.participant) : undefined;
  return { remoteJid, id: ref.id, fromMe: ref.from_me, ...(participant ? { participant } : {}) };
}

function range(chat: string, last: MessageRef | undefined): LastMessageList {
  if (!last || last.timestamp_s <= 0) return [];
  // A group message from someone else whose author we do not know cannot be named: no range.
  if (isGroupJid(toJid(chat)) && !last.from_me && !last.participant) return [];
  return [{ key: keyOf(chat, last), messageTimestamp: last.timestamp_s }];
}
