import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';

export interface CapturedLogs {
  logger: Logger;
  /** Every line written so far, parsed. */
  lines: Array<Record<string, unknown> & { level: number; msg?: string }>;
  /** The raw text written so far, for "never appears anywhere" checks. */
  text(): string;
}

/** A gateway logger that keeps its lines in memory, so a test can read what was logged and at which level. */
export function capturedLogs(level = 'info'): CapturedLogs {
  const raw: string[] = [];
  const lines: CapturedLogs['lines'] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      const text = chunk.toString();
      raw.push(text);
      for (const line of text.split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line) as CapturedLogs['lines'][number]);
      done();
    },
  });
  return { logger: pino({ level, base: undefined }, sink), lines, text: () => raw.join('') };
}

/** pino's level number for `warn`: lines at or above it are warnings or errors. */
export const WARN = 40;
