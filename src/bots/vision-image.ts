import { fileTypeFromBuffer } from 'file-type';
import type { Logger } from '../infra/logging/logger.js';
import type { MediaDownloader } from '../media/media-downloader.js';
import { parseMediaRequest } from '../media/media-request.js';
import type { ImageRef } from './jobs.js';

/** What a model is shown of a contact's image: its bytes and their real type. */
export interface VisionImage {
  mimetype: string;
  bytes: Buffer;
}

/** Models take images of a few MB (OpenAI: 20 MB, many local servers less): bigger ones are not sent. */
export const VISION_MAX_BYTES = 5 * 1024 * 1024;

/**
 * The image formats chat-completions servers accept. The type is read from the bytes by
 * file-type, as outgoing media are: the sender's declared mimetype is not trusted (a "PNG" that
 * is not one would only fail at the model).
 */
const MODEL_IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/webp', 'image/gif']);

async function imageTypeOf(bytes: Buffer): Promise<string | null> {
  const mime = (await fileTypeFromBuffer(bytes))?.mime;
  return mime !== undefined && MODEL_IMAGE_TYPES.has(mime) ? mime : null;
}

export type VisionImageFetcher = (instanceId: string, ref: ImageRef) => Promise<VisionImage | null>;

/**
 * A contact's image for a model: downloaded, MAC- and hash-verified and decrypted as the download
 * routes do it, bounded in size and checked to be an image a model reads. Whatever fails (too big,
 * gone from the media host, not an image) is logged and answers `null`: the model then reads the
 * placeholder, and the contact still gets an answer.
 */
export function visionImages(downloader: MediaDownloader, logger: Logger): VisionImageFetcher {
  return async (instanceId, ref) => {
    const refuse = (reason: string, extra: Record<string, unknown> = {}) => {
      logger.warn({ instanceId, ...extra }, `a contact's image is not shown to the bot's model: ${reason}`);
      return null;
    };
    // The declared size is checked first (nothing fetched), the real one after (a sender may lie).
    if (ref.file_length > VISION_MAX_BYTES) return refuse(`over ${VISION_MAX_BYTES} bytes`, { bytes: ref.file_length });
    let bytes: Buffer;
    try {
      bytes = await downloader.download(
        parseMediaRequest('image', {
          url: ref.url,
          media_key: ref.media_key,
          mimetype: ref.mimetype,
          file_sha256: ref.file_sha256,
          file_length: ref.file_length,
          ...(ref.direct_path === undefined ? {} : { direct_path: ref.direct_path }),
          ...(ref.file_enc_sha256 === undefined ? {} : { file_enc_sha256: ref.file_enc_sha256 }),
        }),
      );
    } catch (err) {
      return refuse('it could not be downloaded and verified', { err });
    }
    if (bytes.length > VISION_MAX_BYTES) return refuse(`over ${VISION_MAX_BYTES} bytes`, { bytes: bytes.length });
    const mimetype = await imageTypeOf(bytes);
    if (!mimetype) return refuse('not a JPEG, PNG, WebP or GIF image', { declared: ref.mimetype });
    return { mimetype, bytes };
  };
}
