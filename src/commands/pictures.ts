import sharp from 'sharp';
import { DomainError, invalidInput } from '../domain/errors.js';

/** The most the network takes for a profile or group picture upload; larger is refused before any call. */
export const PICTURE_MAX_BYTES = 5 * 1024 * 1024;
/** Decoding bombs (a few KB that inflate to gigapixels) are refused before they are decoded. */
const MAX_PIXELS = 40_000_000;
/** The network's picture size: square, 640 pixels. */
const SIDE = 640;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * A picture for the account or a group: JPEG or PNG read from the bytes (never from what the
 * caller says it is), at most PICTURE_MAX_BYTES, cropped square and sized as the network shows it.
 * Anything else is refused here, so nothing reaches the network.
 */
export async function pictureJpeg(media: { data: string }): Promise<Buffer> {
  if (!BASE64.test(media.data) || media.data.length === 0) throw invalidInput('media.data', 'must be base64');
  if (Math.floor((media.data.length * 3) / 4) > PICTURE_MAX_BYTES + 2) {
    throw new DomainError('payload_too_large', `a picture is at most ${PICTURE_MAX_BYTES} bytes`);
  }
  const bytes = Buffer.from(media.data, 'base64');
  if (bytes.length > PICTURE_MAX_BYTES) throw new DomainError('payload_too_large', `a picture is at most ${PICTURE_MAX_BYTES} bytes`);
  let format: string | undefined;
  try {
    format = (await sharp(bytes, { limitInputPixels: MAX_PIXELS }).metadata()).format;
  } catch {
    throw invalidInput('media', 'is not an image (JPEG or PNG)');
  }
  if (format !== 'jpeg' && format !== 'png') throw invalidInput('media', `is ${format ?? 'an unknown format'}: a picture must be JPEG or PNG`);
  try {
    return await sharp(bytes, { limitInputPixels: MAX_PIXELS }).rotate().resize(SIDE, SIDE, { fit: 'cover' }).jpeg({ quality: 80 }).toBuffer();
  } catch {
    throw invalidInput('media', 'could not be read as an image (damaged or too large in pixels)');
  }
}
