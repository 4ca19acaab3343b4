import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  hkdfSync,
  timingSafeEqual,
  type Decipher,
  type Hash,
  type Hmac,
} from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';

/**
 * WhatsApp media encryption, as the real network does it: the 32-byte media key is expanded with
 * HKDF-SHA256 (empty salt, an info string per media type) into iv | cipherKey | macKey | refKey;
 * the file is AES-256-CBC (PKCS#7) encrypted and followed by the first 10 bytes of
 * HMAC-SHA256(macKey, iv + ciphertext). `fileEncSha256` hashes what travels (ciphertext + mac),
 * `fileSha256` the plain file.
 */
export type MediaKind = 'image' | 'video' | 'audio' | 'document';

export const MEDIA_INFO: Readonly<Record<MediaKind, string>> = {
  image: 'WhatsApp Image Keys',
  video: 'WhatsApp Video Keys',
  audio: 'WhatsApp Audio Keys',
  document: 'WhatsApp Document Keys',
};

export const MEDIA_KEY_LENGTH = 32;
export const MAC_LENGTH = 10;
const BLOCK = 16;

export interface MediaKeys {
  iv: Buffer;
  cipherKey: Buffer;
  macKey: Buffer;
  refKey: Buffer;
}

export function expandMediaKey(kind: MediaKind, mediaKey: Uint8Array): MediaKeys {
  if (mediaKey.length !== MEDIA_KEY_LENGTH) throw new RangeError(`media key must be ${MEDIA_KEY_LENGTH} bytes`);
  // An empty salt is, for HMAC, the same as RFC 5869's default of HashLen zero bytes.
  const expanded = Buffer.from(hkdfSync('sha256', mediaKey, Buffer.alloc(0), MEDIA_INFO[kind], 112));
  return {
    iv: expanded.subarray(0, 16),
    cipherKey: expanded.subarray(16, 48),
    macKey: expanded.subarray(48, 80),
    refKey: expanded.subarray(80, 112),
  };
}

export interface EncryptedMedia {
  /** Ciphertext followed by the 10-byte MAC: the bytes the media host serves. */
  enc: Buffer;
  fileSha256: Buffer;
  fileEncSha256: Buffer;
}

export function encryptMedia(kind: MediaKind, plain: Uint8Array, mediaKey: Uint8Array): EncryptedMedia {
  const { iv, cipherKey, macKey } = expandMediaKey(kind, mediaKey);
  const cipher = createCipheriv('aes-256-cbc', cipherKey, iv);
  const ciphertext = Buffer.concat([cipher.update(plain), cipher.final()]);
  const mac = createHmac('sha256', macKey).update(iv).update(ciphertext).digest().subarray(0, MAC_LENGTH);
  const enc = Buffer.concat([ciphertext, mac]);
  return {
    enc,
    fileSha256: createHash('sha256').update(plain).digest(),
    fileEncSha256: createHash('sha256').update(enc).digest(),
  };
}

export type MediaIntegrityReason = 'mac' | 'file_enc_sha256' | 'file_sha256';

/** The downloaded bytes are not the media the message described; nothing of them may be used. */
export class MediaIntegrityError extends Error {
  override name = 'MediaIntegrityError';
  constructor(
    readonly reason: MediaIntegrityReason,
    message: string,
  ) {
    super(message);
  }
}

export interface ExpectedMedia {
  fileSha256: Uint8Array;
  fileEncSha256?: Uint8Array;
}

const sameBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && timingSafeEqual(a, b);

/**
 * Whole-buffer form. The MAC and the encrypted hash are checked before any byte is decrypted, so a
 * forged file never reaches the cipher; the plain hash is checked last.
 */
export function decryptMedia(kind: MediaKind, enc: Uint8Array, mediaKey: Uint8Array, expected: ExpectedMedia): Buffer {
  const { iv, cipherKey, macKey } = expandMediaKey(kind, mediaKey);
  const body = Buffer.from(enc.buffer, enc.byteOffset, enc.byteLength);
  if (body.length < BLOCK + MAC_LENGTH || (body.length - MAC_LENGTH) % BLOCK !== 0) {
    throw new MediaIntegrityError('mac', 'encrypted media is truncated');
  }
  const ciphertext = body.subarray(0, body.length - MAC_LENGTH);
  const mac = createHmac('sha256', macKey).update(iv).update(ciphertext).digest().subarray(0, MAC_LENGTH);
  if (!sameBytes(mac, body.subarray(body.length - MAC_LENGTH))) throw new MediaIntegrityError('mac', 'media MAC mismatch');
  if (expected.fileEncSha256 && !sameBytes(createHash('sha256').update(body).digest(), expected.fileEncSha256)) {
    throw new MediaIntegrityError('file_enc_sha256', 'encrypted media hash mismatch');
  }
  const plain = decipherAll(createDecipheriv('aes-256-cbc', cipherKey, iv), ciphertext);
  if (!sameBytes(createHash('sha256').update(plain).digest(), expected.fileSha256)) {
    throw new MediaIntegrityError('file_sha256', 'media file hash mismatch');
  }
  return plain;
}

function decipherAll(decipher: Decipher, ciphertext: Buffer): Buffer {
  try {
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]);
  } catch {
    // Authentic (the MAC matched) yet badly padded: the sender encrypted something else.
    throw new MediaIntegrityError('file_sha256', 'media padding is invalid');
  }
}

/**
 * Incremental form for large downloads: `update` decrypts as bytes arrive, always holding the last
 * 10 back because they may be the MAC; `final` checks MAC and both hashes. Until `final` returns,
 * the plain bytes handed out are unverified and must not be used (buffer them or discard them).
 */
export class MediaDecryptor {
  private readonly decipher: Decipher;
  private readonly mac: Hmac;
  private readonly encHash: Hash = createHash('sha256');
  private readonly plainHash: Hash = createHash('sha256');
  private tail: Buffer = Buffer.alloc(0);
  private received = 0;
  private done = false;

  constructor(
    kind: MediaKind,
    mediaKey: Uint8Array,
    private readonly expected: ExpectedMedia,
  ) {
    const { iv, cipherKey, macKey } = expandMediaKey(kind, mediaKey);
    this.decipher = createDecipheriv('aes-256-cbc', cipherKey, iv);
    this.mac = createHmac('sha256', macKey).update(iv);
  }

  /** Bytes received so far (ciphertext + MAC), for size limits. */
  get bytesIn(): number {
    return this.received;
  }

  update(chunk: Uint8Array): Buffer {
    if (this.done) throw new Error('media decryptor already finished');
    this.received += chunk.length;
    this.encHash.update(chunk);
    const joined = this.tail.length === 0 ? Buffer.from(chunk) : Buffer.concat([this.tail, chunk]);
    const cut = Math.max(0, joined.length - MAC_LENGTH);
    const ciphertext = joined.subarray(0, cut);
    this.tail = Buffer.from(joined.subarray(cut));
    if (ciphertext.length === 0) return Buffer.alloc(0);
    this.mac.update(ciphertext);
    const plain = this.decipher.update(ciphertext);
    this.plainHash.update(plain);
    return plain;
  }

  final(): Buffer {
    if (this.done) throw new Error('media decryptor already finished');
    this.done = true;
    const cipherLength = this.received - MAC_LENGTH;
    if (this.tail.length < MAC_LENGTH || cipherLength < BLOCK || cipherLength % BLOCK !== 0) {
      throw new MediaIntegrityError('mac', 'encrypted media is truncated');
    }
    if (!sameBytes(this.mac.digest().subarray(0, MAC_LENGTH), this.tail)) throw new MediaIntegrityError('mac', 'media MAC mismatch');
    if (this.expected.fileEncSha256 && !sameBytes(this.encHash.digest(), this.expected.fileEncSha256)) {
      throw new MediaIntegrityError('file_enc_sha256', 'encrypted media hash mismatch');
    }
    let last: Buffer;
    try {
      last = this.decipher.final();
    } catch {
      throw new MediaIntegrityError('file_sha256', 'media padding is invalid');
    }
    this.plainHash.update(last);
    if (!sameBytes(this.plainHash.digest(), this.expected.fileSha256)) {
      throw new MediaIntegrityError('file_sha256', 'media file hash mismatch');
    }
    return last;
  }
}

/**
 * A Transform over a Readable of encrypted media: emits plain bytes as they decrypt and fails with
 * a MediaIntegrityError at the end when the media is not authentic. Consumers must treat the output
 * as unverified until the stream ends without error (collect it, then use it).
 */
export function createMediaDecryptor(kind: MediaKind, mediaKey: Uint8Array, expected: ExpectedMedia): Transform {
  const decryptor = new MediaDecryptor(kind, mediaKey, expected);
  return new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      try {
        const plain = decryptor.update(chunk);
        callback(null, plain.length > 0 ? plain : undefined);
      } catch (error) {
        callback(error as Error);
      }
    },
    flush(callback: TransformCallback) {
      try {
        const last = decryptor.final();
        callback(null, last.length > 0 ? last : undefined);
      } catch (error) {
        callback(error as Error);
      }
    },
  });
}

/** What was computed over the encrypted bytes, wherever it was computed (see src/media/enc-hasher). */
export interface EncryptedDigest {
  /** First 10 bytes of HMAC-SHA256(macKey, iv + ciphertext). */
  mac: Uint8Array;
  /** The 10 bytes the file ends with: the MAC it carries. */
  tail: Uint8Array;
  encSha256?: Uint8Array;
  /** Bytes received, MAC included. */
  length: number;
}

/** The checks on the encrypted side, in MediaDecryptor's order: length, MAC, encrypted hash. */
export function checkEncryptedDigest(digest: EncryptedDigest, expected: ExpectedMedia): void {
  const cipherLength = digest.length - MAC_LENGTH;
  if (digest.tail.length < MAC_LENGTH || cipherLength < BLOCK || cipherLength % BLOCK !== 0) {
    throw new MediaIntegrityError('mac', 'encrypted media is truncated');
  }
  if (!sameBytes(digest.mac, digest.tail)) throw new MediaIntegrityError('mac', 'media MAC mismatch');
  if (expected.fileEncSha256 && !(digest.encSha256 && sameBytes(digest.encSha256, expected.fileEncSha256))) {
    throw new MediaIntegrityError('file_enc_sha256', 'encrypted media hash mismatch');
  }
}

/** What was computed over the decrypted bytes: whether the PKCS#7 padding held, and their hash. */
export interface PlainDigest {
  paddingValid: boolean;
  sha256: Uint8Array;
}

/** The checks on the plain side; run them only after checkEncryptedDigest passed. */
export function checkPlainDigest(digest: PlainDigest, expected: ExpectedMedia): void {
  if (!digest.paddingValid) throw new MediaIntegrityError('file_sha256', 'media padding is invalid');
  if (!sameBytes(digest.sha256, expected.fileSha256)) throw new MediaIntegrityError('file_sha256', 'media file hash mismatch');
}
