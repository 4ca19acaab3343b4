import type { SessionEvent } from './events.js';

/**
 * Status posts (`status@broadcast`) and newsletter (channel) traffic are not conversations: by
 * default (CONTRACT.md, RECEIVE_STATUS) they are neither delivered nor listed as chats, and a
 * receipt or an auto-read must never be sent for them. Applied to what every driver reports.
 */
export const isBroadcastChat = (jid: string): boolean => jid === 'status@broadcast' || jid.endsWith('@newsletter');

/** The events without status and newsletter traffic; an event left with nothing in it is dropped. */
export function withoutBroadcasts(events: SessionEvent[]): SessionEvent[] {
  const out: SessionEvent[] = [];
  for (const event of events) {
    switch (event.type) {
      case 'MessageReceived':
      case 'MessageSent':
        if (!isBroadcastChat(event.data.message.chat)) out.push(event);
        break;
      case 'ReceiptReceived':
      case 'ChatPresenceUpdated':
        if (!isBroadcastChat(event.data.chat)) out.push(event);
        break;
      case 'ChatUpdated':
        if (!isBroadcastChat(event.data.jid)) out.push(event);
        break;
      case 'ChatsUpserted': {
        const chats = event.data.chats.filter((c) => !isBroadcastChat(c.jid));
        if (chats.length) out.push({ type: 'ChatsUpserted', data: { chats } });
        break;
      }
      case 'HistorySyncReceived': {
        // Kept even when emptied: the sync's progress is news of its own.
        const chats = event.data.chats.filter((c) => !isBroadcastChat(c.jid));
        const messages = event.data.messages.filter((m) => !isBroadcastChat(m.chat));
        out.push({ type: 'HistorySyncReceived', data: { ...event.data, chats, messages } });
        break;
      }
      default:
        out.push(event);
    }
  }
  return out;
}
