import type { SessionEventData } from '../../domain/session/events.js';
import type { Conversations } from './conversations.js';
import type { Phones } from './phones.js';
import type { GroupDoc, MessageDoc, PhoneDoc } from './state.js';
import { identityOf } from './messaging.js';
import { chatOf, networkMessage } from './views.js';

type HistorySync = SessionEventData<'HistorySyncReceived'>;
type ChatInfo = HistorySync['chats'][number];

/**
 * What a freshly linked device receives: every chat of the phone (its direct conversations and its
 * groups) with names, unread counts and last activity, and every message, oldest first, in one
 * complete initial sync.
 */
export async function historySync(
  phone: PhoneDoc,
  groups: GroupDoc[],
  conversations: Conversations,
  phones: Phones,
): Promise<HistorySync> {
  const messages = await conversations.involving(phone._id);
  const partners = messages.filter((m) => m.group === undefined).map((m) => (m.from === phone._id ? m.recipients[0] : m.from));
  const names = await phones.byIds(partners.filter((p): p is string => p !== undefined));
  // Senders as the network shows them live: LID-addressed ones with their LIDs (views.ts).
  const senders = await phones.byIds([...new Set(messages.map((m) => m.from))]);
  const identity = (m: MessageDoc) => {
    const sender = senders.get(m.from);
    return sender ? identityOf(sender, m.group !== undefined) : undefined;
  };

  const chats = new Map<string, ChatInfo>();
  for (const group of groups) chats.set(group._id, { jid: group._id, name: group.name, unread_count: 0 });
  for (const message of messages) {
    const jid = chatOf(message, phone._id);
    const chat = chats.get(jid) ?? { jid, unread_count: 0 };
    if (chat.name === undefined && message.group === undefined) {
      const name = names.get(jid.split('@')[0] ?? '')?.push_name;
      if (name !== undefined) chat.name = name;
    }
    if (isUnread(message, phone._id)) chat.unread_count = (chat.unread_count ?? 0) + 1;
    chat.last_message_s = Math.max(chat.last_message_s ?? 0, message.timestamp_s);
    chats.set(jid, chat);
  }
  return {
    sync_type: 'INITIAL_BOOTSTRAP',
    progress: 100,
    is_latest: true,
    chats: [...chats.values()].sort((a, b) => (b.last_message_s ?? 0) - (a.last_message_s ?? 0)),
    messages: messages.map((m) => networkMessage(m, phone._id, identity(m))),
  };
}

const isUnread = (message: MessageDoc, viewer: string) =>
  message.from !== viewer && message.type !== 'reaction' && !message.read_by.includes(viewer);
