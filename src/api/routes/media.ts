import type { MediaKind } from '../../infra/crypto/whatsapp-media.js';
import type { MediaRefresh } from '../../commands/media-refresh.js';
import type { MediaDownloader } from '../../media/media-downloader.js';
import { MediaGoneError } from '../../media/media-source.js';
import { parseMediaRequest } from '../../media/media-request.js';
import { envelope } from '../envelope.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { InstanceIdParams } from '../schemas/common.js';
import { MediaDownloadAnswer, MediaDownloadBody } from '../schemas/media.js';

const KINDS: MediaKind[] = ['image', 'video', 'audio', 'document'];

/**
 * chat/downloadimage, downloadvideo, downloadaudio, downloaddocument: fetch, verify, decrypt. Media
 * the host no longer has (404/410) is asked for again from the sender's phone, once, when `refresh`
 * is given.
 */
export function mediaRoutes(downloader: MediaDownloader, refresh?: MediaRefresh): AnyRoute[] {
  return KINDS.map((kind) =>
    defineRoute({
      method: 'post',
      path: `/instances/{id}/chat/download${kind}`,
      tag: 'Media',
      summary: `Download and decrypt the ${kind} of a received message; refuses foreign hosts, oversize files and any MAC or hash mismatch`,
      auth: 'instance',
      liveSession: true,
      params: InstanceIdParams,
      body: MediaDownloadBody,
      response: { description: 'file downloaded', schema: MediaDownloadAnswer },
      errors: [400, 413, 502],
      handler: async ({ instance, body }) => {
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
