import { Type } from '@sinclair/typebox';
import { Envelope } from './common.js';

const Base64Bytes = (description: string) => Type.String({ minLength: 1, maxLength: 128, description });

/** The spec's downloadvideo body; every download route takes it. */
export const MediaDownloadBody = Type.Object(
  {
    url: Type.String({ format: 'uri', maxLength: 4096, description: "temporary media URL (the message's URL); only the network's media hosts are fetched" }),
    media_key: Base64Bytes('encryption key, base64 (32 bytes)'),
    mimetype: Type.String({
      minLength: 3,
      maxLength: 255,
      // Parameters allowed (audio/ogg; codecs=opus); nothing that could break out of the data URL.
      pattern: '^[A-Za-z0-9][\\w.+-]*/[\\w.+-]+(\\s*;\\s*[\\w.+-]+=[\\w.+-]+)*$',
      description: 'MIME type',
    }),
    file_sha256: Base64Bytes('SHA-256 of the decrypted file, base64'),
    file_length: Type.Integer({ minimum: 0, description: 'size in bytes; over MEDIA_MAX_BYTES is refused with 413' }),
    direct_path: Type.Optional(Type.String({ maxLength: 4096, description: 'direct path of the media (informative)' })),
    file_enc_sha256: Type.Optional(Base64Bytes('SHA-256 of the encrypted file, base64; checked when given')),
  },
  { additionalProperties: false },
);

/**
 * What every download route takes: the spec's body, or (CONTRACT.md, Messages) a stored message's
 * id alone. One object rather than a union, so that a bad field is named as itself; the handler
 * checks that one or the other is whole.
 */
export const MediaDownloadRequest = Type.Object(
  {
    message_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._:-]+$', description: "a message of the instance with media of the route's kind (a sticker downloads as an image); then no other field" }),
    ),
    ...Type.Partial(MediaDownloadBody).properties,
  },
  { additionalProperties: false },
);

export const MediaDownloadAnswer = Envelope(
  Type.Object({
    mimetype: Type.String(),
    data: Type.String({ description: 'data:<mimetype>;base64,<content>' }),
  }),
);
