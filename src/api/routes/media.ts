import type { MediaKind } from '../../infra/crypto/whatsapp-media.js';
import type { MediaRefresh } from '../../commands/media-refresh.js';
import type { MediaDownloader } from '../../media/media-downloader.js';
import { MediaGoneError } from '../../media/media-source.js';
import { parseMediaRequest } from '../../media/media-request.js';
import { envelope } from '../envelope.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { InstanceIdParams } from '../schemas/common.js';
import { MediaDownloadAnswer, MediaDownloadRequest } from '../schemas/media.js';
import type { Static } from '@sinclair/typebox';
import type { NetworkMessage } from '../../domain/session/events.js';
import { invalidInput, notFound } from '../../domain/errors.js';
import type { MediaMetadata } from '../../media/media-request.js';

/** A stored message of the instance as the network carried it (media keys included). */
export type FindMessage = (instanceId: string, messageId: string) => Promise<NetworkMessage | undefined>;

const KINDS: MediaKind[] = ['image', 'video', 'audio', 'document'];
const REQUIRED = ['url', 'media_key', 'mimetype', 'file_sha256', 'file_length'] as const;

/**
 * chat/downloadimage, downloadvideo, downloadaudio, downloaddocument: fetch, verify, decrypt. Media
 * the host no longer has (404/410) is asked for again from the sender's phone, once, when `refresh`
 * is given.
 */
export function mediaRoutes(downloader: MediaDownloader, refresh?: MediaRefresh, findMessage?: FindMessage): AnyRoute[] {
  /** The spec's body as given, or the one a stored message's media makes. */
  const metadataOf = async (instanceId: string, kind: MediaKind, body: Static<typeof MediaDownloadRequest>): Promise<MediaMetadata> => {
    const { message_id: messageId, ...given } = body;
    if (messageId === undefined) {
      const missing = REQUIRED.find((field) => given[field] === undefined);
      if (missing) throw invalidInput(missing, `${missing} is required (or message_id alone)`);
      return given as MediaMetadata;
    }
    const extra = Object.keys(given)[0];
    if (extra !== undefined) throw invalidInput(extra, 'with message_id, no other field');
    const message = findMessage ? await findMessage(instanceId, messageId) : undefined;
    if (!message) throw notFound(`message ${messageId} not found (or its contents are past retention)`);
    const media = message.media;
    if (!media) throw invalidInput('message_id', `message ${messageId} has no media`);
    // Stickers are encrypted as images are.
    const as = media.kind === 'sticker' ? 'image' : media.kind;
    if (as !== kind) throw invalidInput('message_id', `message ${messageId} holds ${media.kind === 'image' ? 'an image' : `a ${media.kind}`}: use download${as}`);
    return {
      url: media.url,
      media_key: media.media_key,
      mimetype: media.mimetype,
      file_sha256: media.file_sha256,
      file_length: media.file_length,
      ...(media.direct_path ? { direct_path: media.direct_path } : {}),
      ...(media.file_enc_sha256 ? { file_enc_sha256: media.file_enc_sha256 } : {}),
    };
  };
  return KINDS.map((kind) =>
    defineRoute({
      method: 'post',
      path: `/instances/{id}/chat/download${kind}`,
      tag: 'Media',
      summary: `Download and decrypt the ${kind} of a message, from its media fields or by its message_id alone; refuses foreign hosts, oversize files and any MAC or hash mismatch`,
      auth: 'instance',
      liveSession: true,
      params: InstanceIdParams,
      body: MediaDownloadRequest,
      response: { description: 'file downloaded', schema: MediaDownloadAnswer },
      errors: [400, 413, 502],
      handler: async ({ instance, body: given }) => {
        const body = await metadataOf(instance._id, kind, given);
        const request = parseMediaRequest(kind, body);
        const plain = await downloader.download(request).catch(async (error: unknown) => {
          if (!(error instanceof MediaGoneError) || !refresh) throw error;
          const fresh = await refresh.refresh(instance._id, body.media_key);
          if (!fresh) throw error;
          return downloader.download(parseMediaRequest(kind, { ...body, url: fresh.url, ...(fresh.direct_path ? { direct_path: fresh.direct_path } : {}) }));
        });
        return { body: envelope({ mimetype: body.mimetype, data: `data:${body.mimetype};base64,${plain.toString('base64')}` }) };
      },
    }),
  );
}
