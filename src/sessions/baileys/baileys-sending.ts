import { generateWAMessageFromContent, prepareWAMessageMedia, type proto, type WAMessage, type WAUrlInfo } from '@whiskeysockets/baileys';
import type { ILogger } from '@whiskeysockets/baileys/lib/Utils/logger.js';
import type { OutgoingContent } from '../../domain/session/outgoing.js';
import type { MediaUpload, UploadedMedia } from '../port.js';
import { base64, toInt } from './jid.js';
import { outgoing, type Context } from './outgoing-content.js';
import type { BaileysSocket } from './socket.js';

/** The network's own limit for one upload's transfer; a 60 MB video on a slow link needs it. */
const UPLOAD_TIMEOUT_MS = 5 * 60_000;

/**
 * Encrypts and uploads a file with Baileys' own media pipeline (prepareWAMessageMedia: the file is
 * read as a stream into an encrypted temporary file, then uploaded), and keeps what a message
 * needs. Duration and waveform are the gateway's (measured with ffmpeg), so Baileys computes
 * neither; it makes the thumbnail of images and videos itself.
 */
export async function uploadMedia(sock: BaileysSocket, file: MediaUpload, logger: ILogger): Promise<UploadedMedia> {
  const kind = file.kind;
  const media = { url: file.path };
  const extra = {
    mimetype: file.mimetype,
    ...(file.ptt !== undefined ? { ptt: file.ptt } : {}),
    ...(file.seconds !== undefined ? { seconds: file.seconds } : {}),
    ...(file.waveform !== undefined ? { waveform: file.waveform } : {}),
    ...(file.gif ? { gifPlayback: true } : {}),
    ...(file.width !== undefined ? { width: file.width } : {}),
    ...(file.height !== undefined ? { height: file.height } : {}),
    ...(file.thumbnail !== undefined ? { jpegThumbnail: Buffer.from(file.thumbnail) } : {}),
    ...(kind === 'document' ? { fileName: file.file_name ?? 'file' } : {}),
  };
  const prepared = await prepareWAMessageMedia({ [kind]: media, ...extra } as Parameters<typeof prepareWAMessageMedia>[0], {
    upload: sock.waUploadToServer,
    logger,
    mediaUploadTimeoutMs: UPLOAD_TIMEOUT_MS,
  });
  const m = (prepared[`${kind}Message` as keyof proto.IMessage] ?? undefined) as MediaFields | undefined;
  if (!m?.url || !m.mediaKey || !m.fileSha256) throw new Error('the network answered the upload without a media location');
  const uploaded: UploadedMedia = {
    kind,
    url: m.url,
    media_key: base64(m.mediaKey) ?? '',
    file_sha256: base64(m.fileSha256) ?? '',
    file_length: Math.max(0, toInt(m.fileLength) ?? file.length),
    mimetype: m.mimetype ?? file.mimetype,
  };
  if (m.directPath) uploaded.direct_path = m.directPath;
  const encSha = base64(m.fileEncSha256);
  if (encSha) uploaded.file_enc_sha256 = encSha;
  if (file.file_name !== undefined) uploaded.file_name = file.file_name;
  if (file.ptt !== undefined) uploaded.ptt = file.ptt;
  if (file.seconds !== undefined) uploaded.seconds = file.seconds;
  if (file.waveform !== undefined) uploaded.waveform = Buffer.from(file.waveform).toString('base64');
  if (file.gif) uploaded.gif = true;
  const width = m.width ?? file.width;
  const height = m.height ?? file.height;
  if (width) uploaded.width = width;
  if (height) uploaded.height = height;
  const thumb = base64(m.jpegThumbnail);
  if (thumb) uploaded.thumbnail = thumb;
  return uploaded;
}

interface MediaFields {
  url?: string | null;
  directPath?: string | null;
  mediaKey?: Uint8Array | null;
  fileSha256?: Uint8Array | null;
  fileEncSha256?: Uint8Array | null;
  fileLength?: Parameters<typeof toInt>[0];
  mimetype?: string | null;
  width?: number | null;
  height?: number | null;
  jpegThumbnail?: Uint8Array | null;
}

/** One message out, as the network takes it; what it was sent as, and its poll secret if any. */
export async function sendOutgoing(
  sock: BaileysSocket,
  jid: string,
  content: OutgoingContent,
  context: Context,
  messageId: string | undefined,
  ephemeralExpiration = 0,
  preview?: WAUrlInfo | null,
): Promise<{ sent: WAMessage | undefined; fallback?: string; pollSecret?: Buffer }> {
  const built = outgoing(content, context, preview);
  const timer = ephemeralExpiration ? { ephemeralExpiration } : {};
  if (built.via === 'content') {
    const options = { ...(messageId === undefined ? {} : { messageId }), ...timer };
    const sent = await sock.sendMessage(jid, built.content, Object.keys(options).length ? options : undefined);
    return { sent, ...(built.fallback ? { fallback: built.fallback } : {}), ...(built.pollSecret ? { pollSecret: built.pollSecret } : {}) };
  }
  const userJid = sock.user?.id ?? sock.authState.creds.me?.id ?? '';
  const message = generateWAMessageFromContent(jid, built.message, { userJid, ...(messageId === undefined ? {} : { messageId }), ...timer });
  await sock.relayMessage(jid, message.message as proto.IMessage, { messageId: message.key.id as string });
  return { sent: message };
}
