import { stat } from 'node:fs/promises';
import { fileTypeFromFile } from 'file-type';
import sharp from 'sharp';
import { invalidInput } from '../../domain/errors.js';
import type { MediaUpload } from '../../sessions/port.js';
import type { Ffmpeg } from './ffmpeg.js';
import type { MediaInput, MediaInputs } from './media-input.js';
import { tempDir } from './temp-files.js';

export type SendKind = MediaUpload['kind'];

/** What a media send route takes besides the address (CONTRACT, "Sending every kind of message"). */
export interface MediaRequest {
  media: MediaInput & { mimetype?: string; file_name?: string };
  /** Audio: a voice note (default) or a plain audio file. */
  voice?: boolean;
  /** Video: plays as a GIF. */
  gif?: boolean;
  file_name?: string;
}

/** A file ready for the driver's upload, on disk until `done` is called. */
export interface PreparedMedia {
  upload: MediaUpload;
  done(): Promise<void>;
}

const VOICE_MIME = 'audio/ogg; codecs=opus';
const IMAGES_AS_IS = new Set(['image/jpeg', 'image/png', 'image/webp']);
const VIDEOS = new Set(['video/mp4', 'video/3gpp', 'video/quicktime', 'video/x-m4v']);
/** What WhatsApp plays as an audio file without conversion. */
const AUDIO_AS_IS = new Set(['audio/mpeg', 'audio/mp4', 'audio/x-m4a', 'audio/aac', 'audio/ogg', 'audio/ogg; codecs=opus', 'audio/amr']);
const STICKER_SIDE = 512;

/**
 * Turns a send's media into a file the network takes, judging it by its bytes, never by the name
 * or type the client gave (file-type reads the file's head): an image route takes images only,
 * and so on, so an executable sent as an image is refused with 400 and nothing is sent. Where the
 * network needs another format the file is converted: voice notes to OGG/Opus with their duration
 * and waveform (ffmpeg), stickers to 512×512 WebP (sharp), images it cannot show to JPEG.
 */
export class MediaPreparer {
  constructor(
    private readonly inputs: MediaInputs,
    private readonly ffmpeg: Ffmpeg,
  ) {}

  async prepare(kind: SendKind, request: MediaRequest): Promise<PreparedMedia> {
    const dir = await tempDir();
    try {
      const source = dir.path('source');
      const got = await this.inputs.toFile(request.media, source);
      if (got.length === 0) throw invalidInput('media', 'is empty');
      const detected = await fileTypeFromFile(source);
      const name = request.file_name ?? request.media.file_name ?? got.name;
      const file = { path: source, length: got.length, mime: detected?.mime, name };
      const upload = await this.shape(kind, request, file, (n) => dir.path(n));
      return { upload, done: () => dir.remove() };
    } catch (err) {
      await dir.remove();
      throw err;
    }
  }

  private async shape(kind: SendKind, request: MediaRequest, file: Source, path: (name: string) => string): Promise<MediaUpload> {
    switch (kind) {
      case 'image':
        return this.image(file, path);
      case 'video':
        if (!file.mime || !VIDEOS.has(file.mime)) throw notKind(file, 'an MP4 or 3GP video');
        return { kind, path: file.path, length: file.length, mimetype: file.mime === 'video/x-m4v' ? 'video/mp4' : file.mime, ...(request.gif ? { gif: true } : {}) };
      case 'audio':
        return this.audio(file, request.voice !== false, path);
      case 'document':
        return {
          kind,
          path: file.path,
          length: file.length,
          // Bytes file-type cannot name (text, CSV) keep the type the client gave.
          mimetype: file.mime ?? request.media.mimetype ?? 'application/octet-stream',
          file_name: file.name ?? 'file',
        };
      case 'sticker':
        return this.sticker(file, path);
    }
  }

  private async image(file: Source, path: (name: string) => string): Promise<MediaUpload> {
    if (!file.mime?.startsWith('image/')) throw notKind(file, 'an image');
    if (IMAGES_AS_IS.has(file.mime)) {
      const { width, height } = await dimensions(file.path);
      return { kind: 'image', path: file.path, length: file.length, mimetype: file.mime, ...size(width, height) };
    }
    // GIF, TIFF, AVIF, HEIF...: shown by the network as JPEG.
    const out = path('image.jpg');
    const info = await sharp(file.path).rotate().jpeg({ quality: 90 }).toFile(out).catch(() => {
      throw notKind(file, 'an image the gateway can read');
    });
    return { kind: 'image', path: out, length: info.size, mimetype: 'image/jpeg', ...size(info.width, info.height) };
  }

  private async audio(file: Source, voice: boolean, path: (name: string) => string): Promise<MediaUpload> {
    // An M4A is an MP4 with sound only; file-type names a plain one audio/x-m4a.
    if (!file.mime || !(file.mime.startsWith('audio/') || file.mime === 'video/mp4')) throw notKind(file, 'audio');
    const opus = file.mime === VOICE_MIME;
    const playable = AUDIO_AS_IS.has(file.mime);
    if ((voice && !opus) || !playable) {
      if (!this.ffmpeg.available) {
        throw invalidInput('media', `${file.mime} must be converted to OGG/Opus and this gateway has no ffmpeg: send OGG/Opus, or install ffmpeg`);
      }
      const out = path('voice.ogg');
      await this.ffmpeg.toVoiceNote(file.path, out).catch(() => {
        throw invalidInput('media', `the ${file.mime} sound could not be decoded`);
      });
      const { seconds, waveform } = await this.ffmpeg.measure(out);
      const { size: length } = await stat(out);
      return { kind: 'audio', path: out, length, mimetype: VOICE_MIME, ptt: voice, seconds, ...(voice ? { waveform } : {}) };
    }
    const measured = this.ffmpeg.available ? await this.ffmpeg.measure(file.path).catch(() => undefined) : undefined;
    return {
      kind: 'audio',
      path: file.path,
      length: file.length,
      mimetype: file.mime === 'video/mp4' ? 'audio/mp4' : file.mime,
      ptt: voice,
      ...(measured ? { seconds: measured.seconds, ...(voice ? { waveform: measured.waveform } : {}) } : {}),
    };
  }

  private async sticker(file: Source, path: (name: string) => string): Promise<MediaUpload> {
    if (!file.mime?.startsWith('image/')) throw notKind(file, 'an image (WebP, PNG or JPEG)');
    if (file.mime === 'image/webp') {
      const { width, height } = await dimensions(file.path);
      if (width === STICKER_SIDE && height === STICKER_SIDE) return { kind: 'sticker', path: file.path, length: file.length, mimetype: 'image/webp', ...size(width, height) };
    }
    const out = path('sticker.webp');
    // A sticker is a 512×512 WebP; the image is fitted inside on a transparent ground.
    const info = await sharp(file.path, { animated: true })
      .resize(STICKER_SIDE, STICKER_SIDE, { fit: 'contain', background: { r: 0, g: 0, b: 0, alpha: 0 } })
      .webp({ quality: 80 })
      .toFile(out)
      .catch(() => {
        throw notKind(file, 'an image the gateway can read');
      });
    return { kind: 'sticker', path: out, length: info.size, mimetype: 'image/webp', ...size(STICKER_SIDE, STICKER_SIDE) };
  }
}

interface Source {
  path: string;
  length: number;
  /** What the bytes are, by file-type; undefined when it cannot tell. */
  mime: string | undefined;
  name: string | undefined;
}

function notKind(file: Source, wanted: string) {
  return invalidInput('media', `the bytes are ${file.mime ?? 'of no known type'}, not ${wanted}; nothing was sent`);
}

async function dimensions(path: string): Promise<{ width?: number; height?: number }> {
  const meta = await sharp(path).metadata().catch(() => undefined);
  return { ...(meta?.width ? { width: meta.width } : {}), ...(meta?.height ? { height: meta.height } : {}) };
}

const size = (width: number | undefined, height: number | undefined) => ({ ...(width ? { width } : {}), ...(height ? { height } : {}) });
