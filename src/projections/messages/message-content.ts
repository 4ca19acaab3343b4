import type { NetworkMessage } from '../../domain/session/events.js';
import type { OutgoingContent } from '../../domain/session/outgoing.js';
import type { MediaSummary, MessageDoc, MessageKind } from './message-doc.js';
import { wordsOf } from './words.js';

type Media = NonNullable<NetworkMessage['media']>;
/** What a message says, as the messages model keeps it (no address, time or state). */
export type Content = Pick<MessageDoc, 'kind' | 'text' | 'caption' | 'media' | 'location' | 'contacts' | 'poll' | 'reply_to' | 'mentions' | 'words' | 'contents'>;

const KIND_OF: Partial<Record<NetworkMessage['type'], MessageKind>> = {
  text: 'text',
  buttons: 'buttons',
  location: 'location',
  contact: 'contact',
  poll: 'poll',
  list: 'list',
  reaction: 'reaction',
};

/** Messages that change another message rather than being one. */
export const CHANGES = new Set<NetworkMessage['type']>(['reaction', 'edit', 'revoke', 'poll_vote']);

export function contentOfMessage(m: NetworkMessage): Content {
  const kind: MessageKind = m.type === 'media' && m.media ? m.media.kind : (KIND_OF[m.type] ?? 'other');
  const text = m.media ? undefined : (m.text ?? m.event?.name ?? m.group_invite?.caption);
  return assemble(kind, {
    ...(text !== undefined ? { text } : {}),
    ...(m.media ? mediaFields(m.media) : {}),
    ...(m.location ? { location: definedOnly(m.location) } : {}),
    ...(m.contacts ? { contacts: m.contacts } : {}),
    ...(m.poll ? { poll: { name: m.poll.name, selectable_count: m.poll.selectable_count, options: m.poll.options } } : {}),
    ...(m.reply_to ? { reply_to: m.reply_to } : {}),
    ...(m.mentions && m.mentions.length > 0 ? { mentions: m.mentions } : {}),
  });
}

/** A send that has not gone out yet (scheduled, queued): what it will say. */
export function contentOfOutgoing(c: OutgoingContent): Content {
  if (c.kind === 'forward') return contentOfMessage(c.message);
  const common = { ...(c.reply_to ? { reply_to: c.reply_to } : {}), ...(c.mentions && c.mentions.length > 0 ? { mentions: c.mentions } : {}) };
  switch (c.kind) {
    case 'text':
      return assemble('text', { text: c.text, ...common });
    case 'buttons':
      return assemble('buttons', { ...(c.text !== undefined ? { text: c.text } : {}), ...common });
    case 'media':
      return assemble(c.media.kind, { ...mediaFields(c.media), ...common });
    case 'location':
      return assemble('location', { location: definedOnly(c.location), ...common });
    case 'contact':
      return assemble('contact', { contacts: c.contacts, ...common });
    case 'poll':
      return assemble('poll', { poll: { name: c.poll.name, selectable_count: c.poll.selectable_count, options: c.poll.options }, ...common });
    case 'list':
      return assemble('list', { text: c.text, ...common });
  }
}

function assemble(kind: MessageKind, fields: Omit<Content, 'kind' | 'words' | 'contents'>): Content {
  const searchable = fields.text ?? fields.caption;
  const words = searchable === undefined ? [] : wordsOf(searchable);
  const held = fields.text !== undefined || fields.caption !== undefined || fields.media !== undefined;
  return { kind, ...fields, ...(words.length > 0 ? { words } : {}), ...(held ? { contents: true as const } : {}) };
}

function mediaFields(media: Media): Pick<Content, 'media' | 'caption'> {
  const summary: MediaSummary = {
    mimetype: media.mimetype,
    file_length: media.file_length,
    ...(media.file_name !== undefined ? { file_name: media.file_name } : {}),
    ...(media.seconds !== undefined ? { seconds: media.seconds } : {}),
    ...(media.kind === 'audio' ? { voice: media.ptt === true } : {}),
  };
  return { media: summary, ...(media.caption !== undefined ? { caption: media.caption } : {}) };
}

/** Optional fields absent rather than undefined: the stores would keep an undefined as null. */
function definedOnly<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
