import { DomainError, invalidInput } from '../../domain/errors.js';
import type { Clock } from '../../infra/clock.js';
import { MediaEncryptPool } from '../../infra/crypto/media-encrypt-pool.js';
import { decryptMedia, encryptMedia } from '../../infra/crypto/whatsapp-media.js';
import type { MediaUpload } from '../port.js';
import type { IdGenerator } from '../../infra/ids.js';
import type { MediaInput } from './schemas.js';
import { DURABLE, type MediaChunkDoc, type SandboxState, type StoredMedia } from './state.js';

/** What a real media host would take; the media route's body limit is sized for it. */
export const MAX_MEDIA_BYTES = 64 * 1024 * 1024;
/** Keeps every chunk document far below MongoDB's 16 MB document limit. */
const CHUNK_BYTES = 3 * 1024 * 1024;
// A plain character class: linear on 90 MiB strings, where grouped repetitions may not be.
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const MIMETYPE = /^[\w.+-]+\/[\w.+-]+(\s*;.*)?$/;

export const mediaPath = (blobId: string) => `/sandbox/media/${blobId}.enc`;
const MEDIA_FILE = /^([A-Za-z0-9]{1,64})\.enc$/;
/** The blob id of a media file name (`<blob>.enc`), or undefined. */
export const blobIdOf = (file: string) => MEDIA_FILE.exec(file)?.[1];
/** The blob id of a media URL or direct path, or undefined. */
const blobIdOfPath = (path: string) => blobIdOf(path.slice(path.lastIndexOf('/') + 1));

/**
 * The sandbox media host: encrypts a phone's file as the network does and keeps the encrypted
 * bytes, which GET /sandbox/media/<blob>.enc serves to the gateway's own download routes.
 */
export class MediaStore {
  /** Workers start on the first upload and never keep the process alive. */
  private readonly encryptor = new MediaEncryptPool();

  constructor(
    private readonly state: SandboxState,
    private readonly ids: IdGenerator,
    private readonly clock: Clock,
    private readonly publicUrl: string,
  ) {}

  async upload(accountId: string, input: MediaInput): Promise<StoredMedia> {
    if (!MIMETYPE.test(input.mimetype)) throw invalidInput('media.mimetype', 'must be a MIME type such as image/jpeg');
    const plain = decodeBase64(input.data_base64);
    const mediaKey = this.ids.bytes(32);
    // Stickers are encrypted as images, as the network does (their keys use the image info string).
    const { enc, fileSha256, fileEncSha256 } = encryptMedia(input.kind === 'sticker' ? 'image' : input.kind, plain, mediaKey);
    const blobId = this.ids.alphanumeric(32);
    await this.put(accountId, blobId, enc);
    const path = mediaPath(blobId);
    const media: StoredMedia = {
      kind: input.kind,
      url: `${this.publicUrl.replace(/\/+$/, '')}${path}`,
      direct_path: path,
      media_key: mediaKey.toString('base64'),
      file_sha256: fileSha256.toString('base64'),
      file_enc_sha256: fileEncSha256.toString('base64'),
      file_length: plain.length,
      mimetype: input.mimetype,
    };
    if (input.caption !== undefined) media.caption = input.caption;
    if (input.file_name !== undefined) media.file_name = input.file_name;
    return media;
  }

  /**
   * An instance's upload: the file is read, encrypted and stored a chunk at a time, so a large video
   * is never held whole; the blob exists (is served) once its last chunk is written. The reading,
   * ciphering and hashing happen on the encryption workers, each chunk being encrypted
   * there while the one before it is stored.
   */
  async uploadFile(accountId: string, file: MediaUpload): Promise<StoredMedia> {
    if (!MIMETYPE.test(file.mimetype)) throw invalidInput('media.mimetype', 'must be a MIME type such as image/jpeg');
    if (file.length > MAX_MEDIA_BYTES) throw new DomainError('payload_too_large', `media larger than ${MAX_MEDIA_BYTES} bytes`);
    const mediaKey = this.ids.bytes(32);
    const blobId = this.ids.alphanumeric(32);
    let index = 0;
    const done = await this.encryptor.encryptFile(file.kind === 'sticker' ? 'image' : file.kind, mediaKey, file.path, CHUNK_BYTES, async (piece) => {
      const doc: MediaChunkDoc = { _id: `${blobId}:${index}`, blob: blobId, index, data: piece.data };
      await this.state.mediaChunks.insertOne(doc);
      index += 1;
    });
    const stored = done.encLength;
    // Not flushed on its own: the message that carries it is, and waits for the disk (Messaging.send).
    await this.state.media.insertOne({ _id: blobId, account_id: accountId, length: stored, chunks: index, created_at: this.clock.now().toISOString() });
    const path = mediaPath(blobId);
    const media: StoredMedia = {
      kind: file.kind,
      url: `${this.publicUrl.replace(/\/+$/, '')}${path}`,
      direct_path: path,
      media_key: mediaKey.toString('base64'),
      file_sha256: done.fileSha256.toString('base64'),
      file_enc_sha256: done.fileEncSha256.toString('base64'),
      file_length: done.fileLength,
      mimetype: file.mimetype,
    };
    if (file.file_name !== undefined) media.file_name = file.file_name;
    if (file.ptt !== undefined) media.ptt = file.ptt;
    if (file.seconds !== undefined) media.seconds = file.seconds;
    if (file.waveform !== undefined) media.waveform = Buffer.from(file.waveform).toString('base64');
    if (file.width !== undefined) media.width = file.width;
    if (file.height !== undefined) media.height = file.height;
    if (file.gif) media.gif = true;
    if (file.thumbnail !== undefined) media.thumbnail = Buffer.from(file.thumbnail).toString('base64');
    return media;
  }

  /** What a phone that received `media` decrypts (null when the host no longer has it). */
  async decrypted(media: StoredMedia): Promise<Buffer | null> {
    const blobId = blobIdOfPath(media.direct_path ?? media.url);
    const enc = blobId ? await this.get(blobId) : null;
    if (!enc) return null;
    return decryptMedia(media.kind === 'sticker' ? 'image' : media.kind, enc, Buffer.from(media.media_key, 'base64'), {
      fileSha256: Buffer.from(media.file_sha256, 'base64'),
    });
  }

  /** The encrypted bytes, or null for an unknown or expired blob. */
  async get(blobId: string): Promise<Buffer | null> {
    const meta = await this.state.media.findOne({ _id: blobId });
    if (!meta || meta.expired) return null;
    return this.bytes(blobId, meta.chunks);
  }

  /** The host stops serving the blob; false when the account has no such blob. */
  async expire(accountId: string, blobId: string): Promise<boolean> {
    const meta = await this.state.media.findOne({ _id: blobId });
    if (!meta || meta.account_id !== accountId) return false;
    await this.state.media.updateOne({ _id: blobId }, { $set: { expired: true } }, DURABLE);
    return true;
  }

  /**
   * The sender's phone uploads an expired file again, as the network's media retry does: the
   * same encrypted bytes (so the same key and hashes) under a new path. Undefined when the blob
   * is not the account's or its bytes are gone.
   */
  async reupload(accountId: string, media: StoredMedia): Promise<StoredMedia | undefined> {
    const blobId = blobIdOfPath(media.direct_path ?? media.url);
    const meta = blobId ? await this.state.media.findOne({ _id: blobId }) : null;
    if (!blobId || !meta || meta.account_id !== accountId) return undefined;
    const enc = await this.bytes(blobId, meta.chunks);
    if (!enc) return undefined;
    const fresh = this.ids.alphanumeric(32);
    await this.put(accountId, fresh, enc);
    const path = mediaPath(fresh);
    return { ...media, url: `${this.publicUrl.replace(/\/+$/, '')}${path}`, direct_path: path };
  }

  private async bytes(blobId: string, count: number): Promise<Buffer | null> {
    const chunks = await this.state.mediaChunks.find({ blob: blobId }, { sort: { index: 1 } });
    if (chunks.length !== count) return null;
    return Buffer.concat(chunks.map((c) => (typeof c.data === 'string' ? Buffer.from(c.data, 'base64') : c.data)));
  }

  private async put(accountId: string, blobId: string, enc: Buffer): Promise<void> {
    const chunks: MediaChunkDoc[] = [];
    for (let offset = 0, index = 0; offset < enc.length; offset += CHUNK_BYTES, index++) {
      const data = enc.subarray(offset, offset + CHUNK_BYTES);
      chunks.push({ _id: `${blobId}:${index}`, blob: blobId, index, data });
    }
    await this.state.docs.batch(
      [
        ...chunks.map((doc) => ({ collection: this.state.mediaChunks.name, op: 'insertOne' as const, doc })),
        {
          collection: this.state.media.name,
          op: 'insertOne',
          doc: { _id: blobId, account_id: accountId, length: enc.length, chunks: chunks.length, created_at: this.clock.now().toISOString() },
        },
      ],
      DURABLE,
    );
  }
}

function decodeBase64(value: string): Buffer {
  const compact = typeof value === 'string' ? value.replace(/\s+/g, '') : '';
  if (compact === '' || compact.length % 4 !== 0 || !BASE64.test(compact)) throw invalidInput('media.data_base64', 'must be base64 (standard alphabet, padded)');
  if ((compact.length / 4) * 3 > MAX_MEDIA_BYTES + 3) {
    throw new DomainError('payload_too_large', `media larger than ${MAX_MEDIA_BYTES} bytes`, [
      { field: 'media.data_base64', message: 'at most 64 MiB' },
    ]);
  }
  const plain = Buffer.from(compact, 'base64');
  if (plain.length > MAX_MEDIA_BYTES) throw new DomainError('payload_too_large', `media larger than ${MAX_MEDIA_BYTES} bytes`);
  return plain;
}
