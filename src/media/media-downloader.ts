import { DomainError, invalidInput } from '../domain/errors.js';
import {
  MAC_LENGTH,
  MediaDecryptor,
  MediaIntegrityError,
  checkEncryptedDigest,
  checkPlainDigest,
  expandMediaKey,
  type ExpectedMedia,
  type MediaIntegrityReason,
} from '../infra/crypto/whatsapp-media.js';
import { MediaCryptoPool, type SharedJob } from './crypto-pool.js';
import type { MediaSource } from './media-source.js';
import type { MediaRequest } from './media-request.js';

/** Bytes that travel for a plain file of `length` bytes: PKCS#7-padded ciphertext, then the MAC. */
const encryptedLength = (length: number) => (Math.floor(length / 16) + 1) * 16 + MAC_LENGTH;

/**
 * From this announced size on, the bytes are received whole into shared memory, then verified and
 * decrypted on worker threads; below it, one streaming pass on the event loop costs less than
 * the hand-over.
 */
const PARALLEL_FROM_BYTES = 256 * 1024;

const FIELD: Record<MediaIntegrityReason, string> = { mac: 'media_key', file_enc_sha256: 'file_enc_sha256', file_sha256: 'file_sha256' };
const WHAT: Record<MediaIntegrityReason, string> = {
  mac: 'the media does not authenticate with this key (MAC mismatch)',
  file_enc_sha256: 'the encrypted media does not match this hash',
  file_sha256: 'the decrypted media does not match this hash',
};

/** The two ways bytes are taken in: decrypted as they stream here, or handed to the workers. */
type Intake = { kind: 'stream'; decryptor: MediaDecryptor; parts: Buffer[] } | { kind: 'shared'; job: SharedJob };

/**
 * Downloads one media item, verifies it and decrypts it: the 10-byte MAC, the encrypted hash when
 * given, the plain hash always, in that order. Nothing is returned unless all hold. Sizes over
 * `maxBytes` are refused as declared, and the transfer is cut as soon as it passes what such a
 * file can weigh.
 */
export class MediaDownloader {
  private readonly pool = new MediaCryptoPool();

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
    const expected: ExpectedMedia = { fileSha256: request.fileSha256, ...(request.fileEncSha256 ? { fileEncSha256: request.fileEncSha256 } : {}) };
    let intake: Intake | undefined;
    try {
      await this.source.fetch(request.url, encryptedLength(this.maxBytes), (announced) => {
        const taken = (intake = this.intake(request, expected, announced));
        return taken.kind === 'stream' ? (chunk) => push(taken.parts, taken.decryptor.update(chunk)) : (chunk) => write(taken.job, chunk);
      });
      if (!intake) throw new DomainError('upstream_failed', 'the media host sent nothing');
      if (intake.kind === 'stream') return Buffer.concat([...intake.parts, intake.decryptor.final()]);
      return await this.verified(intake.job, expected);
    } catch (err) {
      if (intake?.kind === 'shared') intake.job.abort();
      if (err instanceof MediaIntegrityError) throw invalidInput(FIELD[err.reason], WHAT[err.reason]);
      throw err;
    }
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  private intake(request: MediaRequest, expected: ExpectedMedia, announced: number | undefined): Intake {
    if (announced === undefined || announced < PARALLEL_FROM_BYTES) {
      return { kind: 'stream', decryptor: new MediaDecryptor(request.kind, request.mediaKey, expected), parts: [] };
    }
    // Whole blocks and a MAC, or it is not media (and would fail the MAC anyway).
    if ((announced - MAC_LENGTH) % 16 !== 0) throw new MediaIntegrityError('mac', 'encrypted media is truncated');
    const { iv, cipherKey, macKey } = expandMediaKey(request.kind, request.mediaKey);
    return { kind: 'shared', job: this.pool.start(announced, { iv, cipherKey, macKey, withEncSha: expected.fileEncSha256 !== undefined }) };
  }

  /**
   * The workers hash and decrypt the received bytes; the plain bytes stay unused
   * until the MAC, the encrypted hash, the padding and the plain hash have all been checked, in
   * that order.
   */
  private async verified(job: SharedJob, expected: ExpectedMedia): Promise<Buffer> {
    job.complete();
    const result = await job.result();
    if (!result) throw new DomainError('upstream_failed', 'the media download was interrupted');
    checkEncryptedDigest(result.encrypted, expected);
    checkPlainDigest(result.plain, expected);
    return result.plain.bytes;
  }
}

function push(parts: Buffer[], plain: Buffer): void {
  if (plain.length > 0) parts.push(plain);
}

function write(job: SharedJob, chunk: Buffer): void {
  // Content-Length is binding on the host; a body longer than announced is a broken answer.
  try {
    job.write(chunk);
  } catch {
    throw new DomainError('upstream_failed', 'the media host sent more than it announced');
  }
}
