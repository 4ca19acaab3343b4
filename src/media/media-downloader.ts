import { DomainError, invalidInput } from '../domain/errors.js';
import { MAC_LENGTH, MediaDecryptor, MediaIntegrityError, type MediaIntegrityReason } from '../infra/crypto/whatsapp-media.js';
import type { MediaSource } from './media-source.js';
import type { MediaRequest } from './media-request.js';

/** Bytes that travel for a plain file of `length` bytes: PKCS#7-padded ciphertext, then the MAC. */
export const encryptedLength = (length: number) => (Math.floor(length / 16) + 1) * 16 + MAC_LENGTH;

const FIELD: Record<MediaIntegrityReason, string> = { mac: 'media_key', file_enc_sha256: 'file_enc_sha256', file_sha256: 'file_sha256' };
const WHAT: Record<MediaIntegrityReason, string> = {
  mac: 'the media does not authenticate with this key (MAC mismatch)',
  file_enc_sha256: 'the encrypted media does not match this hash',
  file_sha256: 'the decrypted media does not match this hash',
};

/**
 * Downloads one media item, verifies it and decrypts it: the 10-byte MAC, the encrypted hash when
 * given, the plain hash always. Nothing is returned unless all hold. Sizes over `maxBytes` are
 * refused as declared, and the transfer is cut as soon as it passes what such a file can weigh.
 */
export class MediaDownloader {
  constructor(
    private readonly source: MediaSource,
    private readonly maxBytes: number,
  ) {}

  async download(request: MediaRequest): Promise<Buffer> {
    if (request.fileLength > this.maxBytes) {
      throw new DomainError('payload_too_large', `file_length: media over ${this.maxBytes} bytes is not downloaded`, [
        { field: 'file_length', message: `at most ${this.maxBytes} bytes` },
      ]);
    }
    this.source.check(request.url);
    const decryptor = new MediaDecryptor(request.kind, request.mediaKey, {
      fileSha256: request.fileSha256,
      ...(request.fileEncSha256 ? { fileEncSha256: request.fileEncSha256 } : {}),
    });
    const parts: Buffer[] = [];
    await this.source.fetch(request.url, encryptedLength(this.maxBytes), (chunk) => {
      const plain = decryptor.update(chunk);
      if (plain.length > 0) parts.push(plain);
    });
    try {
      parts.push(decryptor.final());
    } catch (err) {
      if (err instanceof MediaIntegrityError) throw invalidInput(FIELD[err.reason], WHAT[err.reason]);
      throw err;
    }
    return Buffer.concat(parts);
  }
}
