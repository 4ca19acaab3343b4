import { invalidInput } from '../domain/errors.js';
import { MEDIA_KEY_LENGTH, type MediaKind } from '../infra/crypto/whatsapp-media.js';

/** The download routes' body (the spec's downloadvideo), as the API receives it. */
export interface MediaMetadata {
  url: string;
  media_key: string;
  mimetype: string;
  file_sha256: string;
  file_length: number;
  direct_path?: string;
  file_enc_sha256?: string;
}

/** The same, decoded: what the downloader works with. */
export interface MediaRequest {
  kind: MediaKind;
  url: URL;
  mediaKey: Buffer;
  mimetype: string;
  fileSha256: Buffer;
  fileEncSha256?: Buffer;
  fileLength: number;
}

// Webhook payloads carry standard base64; some clients re-encode as base64url. Both are bytes.
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
const SHA256_LENGTH = 32;

function bytes(field: string, value: string, length: number): Buffer {
  const encoding = BASE64.test(value) ? 'base64' : BASE64URL.test(value) ? 'base64url' : null;
  const decoded = encoding ? Buffer.from(value, encoding) : null;
  if (!decoded || decoded.length !== length) throw invalidInput(field, `must be ${length} bytes, base64`);
  return decoded;
}

/** Decodes and checks every field; a bad one is a 400 naming it. */
export function parseMediaRequest(kind: MediaKind, body: MediaMetadata): MediaRequest {
  let url: URL;
  try {
    url = new URL(body.url);
  } catch {
    throw invalidInput('url', 'must be an absolute URL');
  }
  const request: MediaRequest = {
    kind,
    url,
    mediaKey: bytes('media_key', body.media_key, MEDIA_KEY_LENGTH),
    mimetype: body.mimetype,
    fileSha256: bytes('file_sha256', body.file_sha256, SHA256_LENGTH),
    fileLength: body.file_length,
  };
  if (body.file_enc_sha256 !== undefined) request.fileEncSha256 = bytes('file_enc_sha256', body.file_enc_sha256, SHA256_LENGTH);
  return request;
}
