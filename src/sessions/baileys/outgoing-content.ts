import { randomBytes } from 'node:crypto';
import type { AnyMessageContent, proto, WAUrlInfo } from '@whiskeysockets/baileys';
import type { NetworkMessage } from '../../domain/session/events.js';
import type { MessageChange, OutgoingContent } from '../../domain/session/outgoing.js';
import { BUTTONS_FALLBACK, buttonsAsText } from './buttons-fallback.js';
import { messageContentOf } from './stored-messages.js';

/**
 * How one outgoing message is handed to Baileys rc14:
 * - `content`: through sock.sendMessage, which builds it with generateWAMessageContent (text with
 *   its preview, locations, contacts, polls, reactions, edits, deletions, forwards);
 * - `message`: media already uploaded, as the finished protobuf, sent with generateWAMessageFromContent
 *   and relayMessage: sendMessage would encrypt and upload the file again under a new key.
 */
export type BaileysOutgoing =
  | { via: 'content'; content: AnyMessageContent; fallback?: string; pollSecret?: Buffer }
  | { via: 'message'; message: proto.IMessage };

export const LIST_FALLBACK =
  'text: WhatsApp no longer renders list messages sent by linked devices on most clients, so the list was sent as a numbered text (the recipient answers with the number or the row title)';

/** What a reply and mentions add to any kind: the quote (stanzaId, author, content) and the mentioned jids. */
export interface Context {
  quote?: proto.IContextInfo;
  mentions?: string[];
}

const b64 = (s: string | undefined) => (s === undefined ? undefined : Buffer.from(s, 'base64'));

export function outgoing(content: OutgoingContent, given: Context = {}, preview?: WAUrlInfo | null): BaileysOutgoing {
  // Mentions are the content's own unless the caller resolved them already.
  const own = content.kind !== 'forward' && content.mentions?.length ? { mentions: content.mentions } : {};
  const context: Context = { ...own, ...given };
  const mentions = context.mentions?.length ? { mentions: context.mentions } : {};
  const quote = context.quote ? { contextInfo: context.quote } : {};
  switch (content.kind) {
    case 'text':
    {
      // An explicit preview (or null: none) keeps Baileys from fetching the link itself: the
      // gateway fetched it already, under the outbound-safety rules (media/outgoing/link-preview).
      const fetched: WAUrlInfo | null = content.preview
        ? { 'canonical-url': content.preview.url, 'matched-text': content.preview.url, title: content.preview.title, ...(content.preview.description ? { description: content.preview.description } : {}) }
        : null;
      const linkPreview = content.link_preview === false ? null : (preview ?? fetched);
      return { via: 'content', content: { text: content.text, linkPreview, ...mentions, ...quote } };
    }
    case 'buttons':
      return { via: 'content', content: { text: buttonsAsText(content), ...mentions, ...quote }, fallback: BUTTONS_FALLBACK };
    case 'list':
      return { via: 'content', content: { text: listAsText(content.text, content.list), ...mentions, ...quote }, fallback: LIST_FALLBACK };
    case 'location': {
      const l = content.location;
      const location = { degreesLatitude: l.latitude, degreesLongitude: l.longitude, ...(l.name ? { name: l.name } : {}), ...(l.address ? { address: l.address } : {}) };
      return { via: 'content', content: { location, ...mentions, ...quote } };
    }
    case 'contact': {
      const contacts = content.contacts.map((c) => ({ displayName: c.display_name, vcard: c.vcard }));
      const displayName = contacts.length === 1 ? contacts[0]?.displayName : `${contacts.length} contacts`;
      return { via: 'content', content: { contacts: { ...(displayName ? { displayName } : {}), contacts }, ...mentions, ...quote } };
    }
    case 'poll': {
      // Drawn here so that MessageSent keeps it: the votes are encrypted with it.
      const pollSecret = randomBytes(32);
      const poll = { name: content.poll.name, values: content.poll.options, selectableCount: content.poll.selectable_count, messageSecret: pollSecret };
      return { via: 'content', content: { poll, ...mentions, ...quote }, pollSecret };
    }
    case 'forward':
      return { via: 'content', content: { forward: { key: { fromMe: false, id: content.message.id, remoteJid: content.message.chat }, message: forwardable(content.message) }, force: true } };
    case 'media':
      return { via: 'message', message: mediaMessage(content, context) };
  }
}

/** Edits and deletions for everyone, as sendMessage builds them (it adds the edit attribute the server wants). */
export function changeContent(jid: string, change: MessageChange): AnyMessageContent {
  if (change.kind === 'edit') return { text: change.text, edit: { remoteJid: jid, id: change.message_id, fromMe: true } };
  return { delete: { remoteJid: jid, id: change.message_id, fromMe: change.from_me, ...(change.participant ? { participant: change.participant } : {}) } };
}

/** An uploaded file as the network's media message of its kind; view-once wraps it. */
function mediaMessage(content: Extract<OutgoingContent, { kind: 'media' }>, context: Context): proto.IMessage {
  const m = content.media;
  const contextInfo: proto.IContextInfo | undefined =
    context.quote || context.mentions?.length ? { ...(context.quote ?? {}), ...(context.mentions?.length ? { mentionedJid: context.mentions } : {}) } : undefined;
  const common = {
    url: m.url,
    directPath: m.direct_path ?? null,
    mediaKey: b64(m.media_key) ?? null,
    fileSha256: b64(m.file_sha256) ?? null,
    fileEncSha256: b64(m.file_enc_sha256) ?? null,
    fileLength: m.file_length,
    mimetype: m.mimetype,
    mediaKeyTimestamp: Math.floor(Date.now() / 1000),
    ...(contextInfo ? { contextInfo } : {}),
  };
  const size = { ...(m.width !== undefined ? { width: m.width } : {}), ...(m.height !== undefined ? { height: m.height } : {}) };
  const thumb = m.thumbnail !== undefined ? { jpegThumbnail: b64(m.thumbnail) } : {};
  const caption = m.caption !== undefined ? { caption: m.caption } : {};
  const once = content.view_once ? { viewOnce: true } : {};
  let message: proto.IMessage;
  switch (m.kind) {
    case 'image':
      message = { imageMessage: { ...common, ...caption, ...size, ...thumb, ...once } };
      break;
    case 'video':
      message = { videoMessage: { ...common, ...caption, ...size, ...thumb, ...once, ...(m.seconds !== undefined ? { seconds: m.seconds } : {}), ...(m.gif ? { gifPlayback: true } : {}) } };
      break;
    case 'audio':
      message = {
        audioMessage: {
          ...common,
          ...once,
          ptt: m.ptt === true,
          ...(m.seconds !== undefined ? { seconds: m.seconds } : {}),
          ...(m.waveform !== undefined ? { waveform: b64(m.waveform) } : {}),
        },
      };
      break;
    case 'document':
      message = { documentMessage: { ...common, ...caption, ...thumb, fileName: m.file_name ?? 'file', title: m.file_name ?? 'file' } };
      break;
    case 'sticker':
      message = { stickerMessage: { ...common, ...size, stickerSentTs: Date.now() } };
      break;
  }
  return content.view_once ? { viewOnceMessage: { message } } : message;
}

/** A stored message as the protobuf a forward carries: its content, media by reference. */
export function forwardable(m: NetworkMessage): proto.IMessage {
  if (m.location) {
    const l = m.location;
    return { locationMessage: { degreesLatitude: l.latitude, degreesLongitude: l.longitude, ...(l.name ? { name: l.name } : {}), ...(l.address ? { address: l.address } : {}) } };
  }
  if (m.contacts?.length === 1 && m.contacts[0]) return { contactMessage: { displayName: m.contacts[0].display_name, vcard: m.contacts[0].vcard } };
  if (m.contacts && m.contacts.length > 1) return { contactsArrayMessage: { contacts: m.contacts.map((c) => ({ displayName: c.display_name, vcard: c.vcard })) } };
  if (m.poll) {
    return {
      pollCreationMessage: { name: m.poll.name, options: m.poll.options.map((optionName) => ({ optionName })), selectableOptionsCount: m.poll.selectable_count },
    };
  }
  if (m.media) {
    const stored = messageContentOf(m);
    if (stored) return stored;
  }
  if (typeof m.text === 'string') return { conversation: m.text };
  throw new Error(`a ${m.type} message cannot be forwarded`);
}

/** The list card as the text sent in its place: body, then each section's rows numbered, then the footer. */
export function listAsText(text: string, list: Extract<OutgoingContent, { kind: 'list' }>['list']): string {
  const parts: string[] = [];
  if (list.title?.trim()) parts.push(`*${list.title.trim()}*`);
  if (text.trim()) parts.push(text.trim());
  let n = 0;
  for (const section of list.sections) {
    const rows = section.rows.map((r) => `${++n}. ${r.title}${r.description ? ` - ${r.description}` : ''}`);
    parts.push([section.title ? `*${section.title}*` : '', ...rows].filter(Boolean).join('\n'));
  }
  if (list.footer?.trim()) parts.push(`_${list.footer.trim()}_`);
  return parts.join('\n\n');
}
