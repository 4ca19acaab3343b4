import type { proto } from '@whiskeysockets/baileys';
import { sessionStream, type NetworkMessage } from '../../domain/session/events.js';
import type { EventStore } from '../../infra/eventstore/port.js';

/** How far back a retry request is looked up: WhatsApp retries within minutes to days. */
const PAGE = 500;
const MAX_EVENTS = 20_000;

/**
 * A message of the instance's own session stream, sent or received, newest first: the recipient's
 * phone asks for a re-send (a retry receipt) when it could not decrypt one of ours, and Baileys'
 * own cache of recent sends is small (5 minutes, 512 messages), without which the recipient keeps
 * "waiting for this message"; a reply quotes its message with author and content. Contents past
 * retention are gone from the log, and then so is the answer.
 */
export function storedSessionMessages(events: EventStore) {
  return async (instanceId: string, messageId: string): Promise<NetworkMessage | undefined> => {
    let fromRevision: bigint | undefined;
    for (let read = 0; read < MAX_EVENTS; read += PAGE) {
      const page = await events.readStream(sessionStream(instanceId), { direction: 'backwards', maxCount: PAGE, ...(fromRevision === undefined ? {} : { fromRevision }) });
      for (const event of page) {
        if (event.type !== 'MessageSent' && event.type !== 'MessageReceived') continue;
        const message = (event.data as { message?: NetworkMessage | null }).message;
        if (message?.id === messageId) return message;
      }
      const last = page.at(-1);
      if (page.length < PAGE || !last || last.revision === 0n) return undefined;
      fromRevision = last.revision - 1n;
    }
    return undefined;
  };
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
  if (m.reply_to) return { extendedTextMessage: { text: m.text, contextInfo: { stanzaId: m.reply_to } } };
  return { conversation: m.text };
}
