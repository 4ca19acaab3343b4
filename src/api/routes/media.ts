import type { MediaKind } from '../../infra/crypto/whatsapp-media.js';
import type { MediaDownloader } from '../../media/media-downloader.js';
import { parseMediaRequest } from '../../media/media-request.js';
import { envelope } from '../envelope.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { InstanceIdParams } from '../schemas/common.js';
import { MediaDownloadAnswer, MediaDownloadBody } from '../schemas/media.js';

const KINDS: MediaKind[] = ['image', 'video', 'audio', 'document'];

/** chat/downloadimage, downloadvideo, downloadaudio, downloaddocument: fetch, verify, decrypt. */
export function mediaRoutes(downloader: MediaDownloader): AnyRoute[] {
  return KINDS.map((kind) =>
    defineRoute({
      method: 'post',
      path: `/instances/{id}/chat/download${kind}`,
      tag: 'Media',
      summary: `Download and decrypt the ${kind} of a received message; refuses foreign hosts, oversize files and any MAC or hash mismatch`,
      auth: 'instance',
      params: InstanceIdParams,
      body: MediaDownloadBody,
      response: { description: 'file downloaded', schema: MediaDownloadAnswer },
      errors: [400, 413, 502],
      handler: async ({ body }) => {
        const plain = await downloader.download(parseMediaRequest(kind, body));
        return { body: envelope({ mimetype: body.mimetype, data: `data:${body.mimetype};base64,${plain.toString('base64')}` }) };
      },
    }),
  );
}
