import { SessionEventSchemas, type NetworkMessage, type SessionEventData, type SessionEventType } from '../../domain/session/events.js';
import { isOneOf, type RecordedEvent } from '../../domain/recorded.js';
import { messageEvent } from './message.js';
import type { RenderedEvent, WebhookType } from './schemas.js';

const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

/** A renderer names its webhook type once; the body it builds is checked against that type's schema. */
type Renderer<K extends SessionEventType> = {
  [T in WebhookType]: { type: T; render(data: SessionEventData<K>): Omit<Extract<RenderedEvent, { type: T }>, 'type'> };
}[WebhookType];
type Renderers = { [K in SessionEventType]?: Renderer<K> };

const message = (d: { message: NetworkMessage }) => ({ event: messageEvent(d.message) });
const participants = (d: SessionEventData<'GroupParticipantsAdded' | 'GroupParticipantsRemoved'>) => ({
  event: { JID: d.group, Participants: d.participants.map((p) => p.jid), Sender: d.by ?? '' },
});

/** Which stored session event becomes which webhook, and how its body is built. */
const RENDERERS: Renderers = {
  MessageReceived: { type: 'Message', render: message },
  MessageSent: { type: 'Message', render: message },
  ReceiptReceived: {
    type: 'ReadReceipt',
    render: (d) => ({
      event: {
        MessageIDs: d.message_ids,
        Chat: d.chat,
        Sender: d.sender,
        Timestamp: iso(d.timestamp_s),
        ...(d.error ? { Error: { code: d.error.code, reason: d.error.reason } } : {}),
      },
      state: d.state,
    }),
  },
  // A queued or scheduled send given up is, to a client, a send the network refused (CONTRACT,
  // "Sending every kind of message"): the same ReadReceipt Failed with Error {code, reason}.
  SendAbandoned: {
    type: 'ReadReceipt',
    render: (d) => ({
      event: { MessageIDs: [d.message_id], Chat: d.to ?? '', Sender: d.to ?? '', Timestamp: iso(d.timestamp_s ?? 0), Error: { code: d.code ?? 0, reason: d.reason } },
      state: 'Failed',
    }),
  },
  SessionConnected: {
    type: 'Connected',
    render: (d) => ({
      event: { JID: d.jid, Phone: d.phone, Business: d.business, ...(d.push_name !== undefined ? { PushName: d.push_name } : {}) },
    }),
  },
  SessionDisconnected: {
    type: 'Disconnected',
    render: (d) => ({
      event: {
        Reason: d.reason,
        LoggedOut: d.reason === 'logged_out',
        ...(d.status_code !== undefined ? { StatusCode: d.status_code } : {}),
        ...(d.message !== undefined ? { Message: d.message } : {}),
      },
    }),
  },
  SessionLoggedOut: {
    type: 'Disconnected',
    render: (d) => ({ event: { Reason: 'logged_out', LoggedOut: true, By: d.by } }),
  },
  PresenceUpdated: {
    type: 'Presence',
    render: (d) => ({
      event: { From: d.jid, Unavailable: d.state === 'unavailable', ...(d.last_seen_s !== undefined ? { LastSeen: iso(d.last_seen_s) } : {}) },
    }),
  },
  ChatPresenceUpdated: {
    type: 'ChatPresence',
    render: (d) => ({ event: { Chat: d.chat, Sender: d.sender, State: d.state } }),
  },
  HistorySyncReceived: {
    type: 'HistorySync',
    render: (d) => {
      const counts = new Map<string, number>();
      for (const m of d.messages) counts.set(m.chat, (counts.get(m.chat) ?? 0) + 1);
      const chats = new Map(d.chats.map((c) => [c.jid, c]));
      // A chat can appear only through its messages; it is still a synced conversation.
      for (const jid of counts.keys()) if (!chats.has(jid)) chats.set(jid, { jid });
      const Conversations = [...chats.values()].map((c) => ({
        ID: c.jid,
        ...(c.name !== undefined ? { Name: c.name } : {}),
        ...(c.unread_count !== undefined ? { UnreadCount: c.unread_count } : {}),
        ...(c.archived !== undefined ? { Archived: c.archived } : {}),
        ...(c.pinned !== undefined ? { Pinned: c.pinned } : {}),
        ...(c.last_message_s !== undefined ? { LastMessageTimestamp: iso(c.last_message_s) } : {}),
        MessageCount: counts.get(c.jid) ?? 0,
      }));
      return {
        event: {
          SyncType: d.sync_type,
          ...(d.progress !== undefined ? { Progress: d.progress } : {}),
          ...(d.is_latest !== undefined ? { IsLatest: d.is_latest } : {}),
          Conversations,
        },
      };
    },
  },
  GroupParticipantsAdded: { type: 'GroupParticipantsAdd', render: participants },
  GroupParticipantsRemoved: { type: 'GroupParticipantsRemove', render: participants },
};

/** Stored event types that become webhooks. */
export const RENDERED_EVENT_TYPES: readonly string[] = Object.keys(RENDERERS);

/** The webhook type a stored event type becomes, read without rendering (undefined: none). */
export function webhookTypeOf(storedType: string): WebhookType | undefined {
  return Object.hasOwn(RENDERERS, storedType) ? RENDERERS[storedType as SessionEventType]?.type : undefined;
}

/** The type-specific part of a body, without its type: `event`, and `state` for a ReadReceipt. */
export type RenderedBody = RenderedEvent extends infer R ? (R extends unknown ? Omit<R, 'type'> : never) : never;

/**
 * The webhook type a stored event becomes and the type-specific part of its body, or undefined
 * when it never becomes one. Typed events only: their data was checked against the stored schema.
 */
export function renderEvent(event: RecordedEvent): { type: WebhookType; rendered: RenderedBody } | undefined {
  return isOneOf(SessionEventSchemas, event) ? renderWith(event) : undefined;
}

function renderWith<K extends SessionEventType>(event: { type: K; data: SessionEventData<K> }): { type: WebhookType; rendered: RenderedBody } | undefined {
  const renderer: Renderer<K> | undefined = RENDERERS[event.type];
  return renderer ? { type: renderer.type, rendered: renderer.render(event.data) } : undefined;
}
