import { call, callData } from './api.js';

/** A chat of GET /instances/{id}/chats (the fields the Conversations view shows). */
export interface Chat {
  jid: string;
  phone: string;
  name: string;
  archived: boolean;
  pinned: boolean;
  messages_unread: number;
  marked_as_unread: boolean;
  is_group: boolean;
  last_message_timestamp_ms: number;
}

/** CONTRACT.md's Message. */
export interface Message {
  message_id: string;
  chat_jid: string;
  from_me: boolean;
  sender_jid: string;
  sender_phone: string;
  push_name: string;
  timestamp: string;
  kind: string;
  text?: string;
  caption?: string;
  media?: { mimetype: string; file_length: number; file_name?: string; seconds?: number; voice?: boolean };
  location?: { latitude: number; longitude: number; name?: string; address?: string };
  contacts?: { display_name: string; vcard: string }[];
  poll?: { name: string; selectable_count: number; options: { name: string; votes: number }[] };
  reply_to?: string;
  reactions: { emoji: string; sender_jid: string }[];
  edited_at?: string;
  revoked: boolean;
  status?: string;
  error?: { code?: number; reason: string };
}

export interface MessagePage {
  messages: Message[];
  next_before: string | null;
}

const base = (instanceId: string) => `/instances/${encodeURIComponent(instanceId)}`;

export const listChats = async (instanceId: string): Promise<Chat[]> => (await call<{ content: Chat[] }>('GET', `${base(instanceId)}/chats?page_size=100`)).content;

export const chatMessages = (instanceId: string, jid: string, limit: number, before?: string): Promise<MessagePage> =>
  callData('GET', `${base(instanceId)}/chats/${encodeURIComponent(jid)}/messages?limit=${limit}${before ? `&before=${encodeURIComponent(before)}` : ''}`);

export const searchMessages = (instanceId: string, q: string): Promise<MessagePage> => callData('GET', `${base(instanceId)}/messages/search?limit=20&q=${encodeURIComponent(q)}`);

/** Which download route a kind of media goes through (stickers are images to the network). */
export const downloadKind = (kind: string): string => (kind === 'sticker' ? 'image' : kind);

/** A message's media as a data URL, by its id alone. */
export const mediaOf = async (instanceId: string, message: Message): Promise<string> =>
  (await callData<{ mimetype: string; data: string }>('POST', `${base(instanceId)}/chat/download${downloadKind(message.kind)}`, { message_id: message.message_id })).data;

export interface Answer {
  text: string;
  replyTo?: string;
  file?: { name: string; type: string; base64: string };
}

/** Sends the operator's answer: text, or an image or a document with the text as its caption. */
export async function sendAnswer(instanceId: string, jid: string, answer: Answer): Promise<string> {
  const common = { phone: jid, ...(answer.replyTo ? { reply_to: answer.replyTo } : {}) };
  const caption = answer.text.trim() ? { caption: answer.text } : {};
  const { file } = answer;
  const sent = !file
    ? await callData<{ message_id: string }>('POST', `${base(instanceId)}/chat/send/text`, { ...common, message: answer.text })
    : file.type.startsWith('image/')
      ? await callData<{ message_id: string }>('POST', `${base(instanceId)}/chat/send/image`, { ...common, ...caption, media: { data: file.base64, mimetype: file.type } })
      : await callData<{ message_id: string }>('POST', `${base(instanceId)}/chat/send/document`, {
          ...common,
          ...caption,
          file_name: file.name,
          media: { data: file.base64, ...(file.type ? { mimetype: file.type } : {}) },
        });
  return sent.message_id;
}

export const markRead = (instanceId: string, jid: string, messageIds: string[]) => callData('POST', `${base(instanceId)}/chat/markread`, { phone: jid, message_ids: messageIds });

/** A file as base64 (without the data URL's prefix). */
export function readFile(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ''));
    reader.onerror = () => reject(reader.error ?? new Error('the file could not be read'));
    reader.readAsDataURL(file);
  });
}

/** What a chat list shows of a message: its words, or what kind of thing it is. */
export function preview(m: Message): string {
  if (m.revoked) return 'This message was deleted';
  const words = m.text ?? m.caption;
  if (words) return words;
  if (m.poll) return `Poll: ${m.poll.name}`;
  if (m.location) return `Location${m.location.name ? `: ${m.location.name}` : ''}`;
  if (m.contacts) return `Contact: ${m.contacts.map((c) => c.display_name).join(', ')}`;
  if (m.media) return m.media.file_name ?? m.kind;
  return m.kind;
}
