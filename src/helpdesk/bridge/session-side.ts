import { onNetwork } from '../../sessions/network-call.js';
import { DomainError } from '../../domain/errors.js';
import type { NetworkMessage } from '../../domain/session/events.js';
import type { MediaDownloader } from '../../media/media-downloader.js';
import type { MediaPreparer } from '../../media/outgoing/prepare-media.js';
import { parseMediaRequest } from '../../media/media-request.js';
import type { InstanceQueries } from '../../projections/instances/instance-queries.js';
import type { SessionManager } from '../../sessions/session-manager.js';
import type { SessionRecorder } from '../../sessions/session-recorder.js';
import type { HelpdeskFile } from '../port.js';
import type { MediaFetcher } from './to-helpdesk.js';
import type { WhatsAppSender } from './to-whatsapp.js';

/**
 * The bridge's sends go through the live session and are recorded as the API's are, marked as the
 * helpdesk's. An agent's file goes through the send routes' media pipeline: judged by its bytes,
 * an audio file sent as a voice note (OGG/Opus, duration, waveform), a file that is not what the
 * helpdesk called it sent as a document.
 */
export function sessionSender(manager: SessionManager, recorder: SessionRecorder, instances: InstanceQueries, preparer?: MediaPreparer): WhatsAppSender {
  return {
    sendText: (instanceId, to, text, messageId) => onNetwork(manager, instanceId, (c) => c.sendText(to, text, { messageId })),
    sendMedia: (instanceId, to, media, messageId) =>
      onNetwork(manager, instanceId, async (c) => {
        if (!preparer) return c.sendMedia(to, media, { messageId });
        const request = { media: { data: media.bytes.toString('base64') }, ...(media.file_name ? { file_name: media.file_name } : {}), voice: true };
        const prepared = await preparer.prepare(media.kind, request).catch((err: unknown) => {
          if (err instanceof DomainError && err.type === 'invalid_input' && media.kind !== 'document') return preparer.prepare('document', request);
          throw err;
        });
        try {
          const uploaded = await c.uploadMedia(prepared.upload);
          const caption = media.caption !== undefined && uploaded.kind !== 'audio' ? { caption: media.caption } : {};
          return (await c.sendMessage(to, { kind: 'media', media: { ...uploaded, ...caption } }, { messageId })).message;
        } finally {
          await prepared.done();
        }
      }),
    async recordSent(instanceId, message, causationId) {
      const instance = await instances.byId(instanceId);
      if (!instance) return;
      await recorder.record(instanceId, instance.account_id, [{ type: 'MessageSent', data: { message, origin: 'helpdesk' } }], {
        actor: { kind: 'helpdesk' },
        correlationId: causationId,
        causationId,
        accountId: instance.account_id,
        instanceId,
      });
    },
  };
}

/** A message's media, downloaded, verified and decrypted as the download routes do it. */
export function mediaFetcher(downloader: MediaDownloader): MediaFetcher {
  return {
    async fetch(message: NetworkMessage): Promise<HelpdeskFile | null> {
      const media = message.media;
      if (!media) return null;
      try {
        // A sticker is encrypted as an image is (the same key info).
        const request = parseMediaRequest(media.kind === 'sticker' ? 'image' : media.kind, {
          url: media.url,
          media_key: media.media_key,
          mimetype: media.mimetype,
          file_sha256: media.file_sha256,
          file_length: media.file_length,
          ...(media.direct_path === undefined ? {} : { direct_path: media.direct_path }),
          ...(media.file_enc_sha256 === undefined ? {} : { file_enc_sha256: media.file_enc_sha256 }),
        });
        const bytes = await downloader.download(request);
        const extension = media.mimetype.split('/')[1]?.split(';')[0] ?? 'bin';
        return { name: media.file_name ?? `${media.kind}.${extension}`, contentType: media.mimetype, bytes };
      } catch (err) {
        // A passing failure is retried with the job; media that is gone or does not verify will
        // not come back, and the message still reaches the helpdesk with its caption.
        if (err instanceof DomainError && err.type === 'upstream_failed') throw err;
        return null;
      }
    },
  };
}
