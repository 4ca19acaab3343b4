import type { proto } from '@whiskeysockets/baileys';
import { sessionStream, type NetworkMessage } from '../../domain/session/events.js';
import type { EventStore } from '../../infra/eventstore/port.js';
import { typedEvent, type UntypedRecordedEvent } from '../../domain/recorded.js';

/** How far back a media message is looked up by its key. */
const PAGE = 500;
const MAX_EVENTS = 20_000;

/**
 * A message of the instance's own session stream matching a predicate, newest first, within the
 * last MAX_EVENTS events: expired media is asked for again by its media key. Messages looked up
 * by chat and id (retry requests, quotes, read receipts) go through the messages read model
 * instead (src/projections/messages).
 */
export function findStoredMessage(events: EventStore) {
  return async (instanceId: string, match: (message: NetworkMessage) => boolean): Promise<NetworkMessage | undefined> => {
    let fromRevision: bigint | undefined;
    for (let read = 0; read < MAX_EVENTS; read += PAGE) {
      const page = await events.readStream(sessionStream(instanceId), { direction: 'backwards', maxCount: PAGE, ...(fromRevision === undefined ? {} : { fromRevision }) });
      for (const event of page) {
        const found = messagesOf(event).find(match);
        if (found) return found;
      }
      const last = page.at(-1);
      if (page.length < PAGE || !last || last.revision === 0n) return undefined;
      fromRevision = last.revision - 1n;
    }
    return undefined;
  };
}

const MESSAGE_TYPES = new Set(['MessageSent', 'MessageReceived', 'HistorySyncReceived']);

/** The messages a stored event carries; a malformed one (reported where the log is projected) carries none. */
function messagesOf(raw: UntypedRecordedEvent): NetworkMessage[] {
  // Only the types that carry messages are worth checking: most of a session's events do not.
  if (!MESSAGE_TYPES.has(raw.type)) return [];
  const typed = typedEvent(raw);
  if (!typed.ok) return [];
  const { event } = typed;
  switch (event.type) {
    case 'MessageSent':
    case 'MessageReceived':
      return [event.data.message];
    case 'HistorySyncReceived':
      return event.data.messages;
    default:
      return [];
  }
}

/**
 * A stored message as the protobuf Baileys re-encrypts for the retry. Only what we send carries
 * content worth re-sending: texts (buttons go out as text), replies and reactions; media is
 * re-sent by reference (the recipient downloads it again).
 */
export function messageContentOf(m: NetworkMessage): proto.IMessage | undefined {
  if (m.reaction) return { reactionMessage: { key: { remoteJid: m.chat, id: m.reaction.message_id, fromMe: m.reaction.from_me ?? false }, text: m.reaction.text } };
  if (m.media) {
    const media = {
      url: m.media.url,
      directPath: m.media.direct_path ?? null,
      mediaKey: Buffer.from(m.media.media_key, 'base64'),
      fileSha256: Buffer.from(m.media.file_sha256, 'base64'),
      fileEncSha256: m.media.file_enc_sha256 ? Buffer.from(m.media.file_enc_sha256, 'base64') : null,
      fileLength: m.media.file_length,
      mimetype: m.media.mimetype,
    };
    switch (m.media.kind) {
      case 'image':
        return { imageMessage: { ...media, caption: m.media.caption ?? null } };
      case 'video':
        return { videoMessage: { ...media, caption: m.media.caption ?? null } };
      case 'audio':
        return { audioMessage: { ...media, ptt: m.media.ptt ?? null } };
      case 'document':
        return { documentMessage: { ...media, fileName: m.media.file_name ?? null } };
      case 'sticker':
        return { stickerMessage: media };
    }
  }
  if (typeof m.text !== 'string') return undefined;
  if (m.reply_to) {
    // The quote as it went out: its author and content, so the recipient's phone shows it again.
    const quote = {
      ...(m.quoted?.sender ? { participant: m.quoted.sender } : {}),
      ...(m.quoted?.text !== undefined ? { quotedMessage: { conversation: m.quoted.text } } : {}),
    };
    return { extendedTextMessage: { text: m.text, contextInfo: { stanzaId: m.reply_to, ...quote } } };
  }
  return { conversation: m.text };
}
