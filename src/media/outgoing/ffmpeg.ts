import { spawn } from 'node:child_process';

/**
 * Debian's ffmpeg, run as a child process: voice notes are converted to OGG/Opus (what WhatsApp
 * plays as a voice note) and measured, their duration and the 64-sample waveform drawn under the
 * note, from the decoded sound. Where ffmpeg is missing the gateway says so at start and answers
 * 400 for audio that needs it (`available` false).
 */
export class Ffmpeg {
  private constructor(
    readonly available: boolean,
    private readonly binary: string,
  ) {}

  static async find(binary = 'ffmpeg'): Promise<Ffmpeg> {
    const ok = await run(binary, ['-hide_banner', '-version']).then(
      () => true,
      () => false,
    );
    return new Ffmpeg(ok, binary);
  }

  /** Any sound ffmpeg reads, as a mono 48 kHz Opus voice note in an OGG file. */
  async toVoiceNote(input: string, output: string): Promise<void> {
    await run(this.binary, ['-hide_banner', '-loglevel', 'error', '-nostdin', '-y', '-i', input, '-vn', '-map_metadata', '-1', '-ac', '1', '-ar', '48000', '-c:a', 'libopus', '-b:a', '32k', '-application', 'voip', '-f', 'ogg', output]);
  }

  /**
   * The sound's length in whole seconds (at least 1) and its waveform: 64 loudness samples, 0 to
   * 100, each the peak of its slice of the decoded sound relative to the loudest slice, as WhatsApp
   * draws it. Decoded at 8 kHz mono: plenty for 64 samples, and cheap.
   */
  async measure(input: string): Promise<{ seconds: number; waveform: Uint8Array }> {
    const rate = 8000;
    const peaks: number[] = [];
    let samples = 0;
    // Peaks per 50 ms block, folded into 64 samples at the end (the length is not known before).
    const block = rate / 20;
    let current = 0;
    let inBlock = 0;
    let carry: Buffer | undefined;
    await run(this.binary, ['-hide_banner', '-loglevel', 'error', '-nostdin', '-i', input, '-vn', '-ac', '1', '-ar', String(rate), '-f', 's16le', '-'], (chunk) => {
      const data = carry ? Buffer.concat([carry, chunk]) : chunk;
      const whole = data.length - (data.length % 2);
      for (let at = 0; at < whole; at += 2) {
        const v = Math.abs(data.readInt16LE(at));
        if (v > current) current = v;
        if (++inBlock === block) {
          peaks.push(current);
          current = 0;
          inBlock = 0;
        }
      }
      samples += whole / 2;
      carry = whole < data.length ? data.subarray(whole) : undefined;
    });
    if (inBlock > 0) peaks.push(current);
    return { seconds: Math.max(1, Math.round(samples / rate)), waveform: waveformOf(peaks) };
  }
}

/** 64 samples (0-100) from any number of peaks; silence is all zeros. */
export function waveformOf(peaks: number[]): Uint8Array {
  const out = new Uint8Array(64);
  if (peaks.length === 0) return out;
  const slices = Array.from({ length: 64 }, (_, i) => {
    const from = Math.floor((i * peaks.length) / 64);
    const to = Math.max(from + 1, Math.floor(((i + 1) * peaks.length) / 64));
    let max = 0;
    for (let j = from; j < Math.min(to, peaks.length); j++) max = Math.max(max, peaks[j] as number);
    return max;
  });
  const loudest = Math.max(...slices);
  if (loudest === 0) return out;
  slices.forEach((v, i) => (out[i] = Math.round((v / loudest) * 100)));
  return out;
}

/** Runs a command; stdout to `onData` when given; rejects with the end of stderr on failure. */
function run(binary: string, args: string[], onData?: (chunk: Buffer) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { stdio: ['ignore', onData ? 'pipe' : 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (d: string) => (stderr = (stderr + d).slice(-2000)));
    if (onData) child.stdout?.on('data', onData);
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`${binary} exited with ${code}: ${stderr.trim()}`))));
  });
}
