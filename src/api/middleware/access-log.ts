import { pino, type Logger } from 'pino';

/** Where pino writes: sonic-boom, a test's Writable, a transport's thread stream. */
interface LineSink {
  write(chunk: string): unknown;
}

/** The logger's own pieces, read through pino's exported symbols so a line is formatted as it would format it. */
interface PinoParts {
  [pino.symbols.lsCacheSym]: Record<number, string>;
  [pino.symbols.timeSym]: () => string;
  [pino.symbols.chindingsSym]: string;
  [pino.symbols.endSym]: string;
  [pino.symbols.messageKeySym]: string;
  [pino.symbols.streamSym]: LineSink;
}

/**
 * The access log: one line per request, in the line pino would write for
 * `logger.info({ requestId, method, path, status, ms }, 'request')` (its level field, time,
 * bindings and line end), written to the logger's destination once per turn of the event loop.
 *
 * Why not `logger.info`: under wrk that call and its write were the largest cost of an
 * authenticated GET beyond Koa's own (about 10 µs of 78 µs CPU per request). pino walks the
 * object generically, and sonic-boom, while an asynchronous write is under way, appends each line
 * to a pending string and measures that whole string's UTF-8 length again on every write, so a
 * busy server paid for up to 16 KB per line. Here the five fields are serialised straight into
 * one string and the lines of a turn reach the destination in one write.
 * The fields are never a credential: a secret path is replaced by its template by the caller.
 */
export class AccessLog {
  private pending = '';
  private scheduled = false;
  private readonly parts: PinoParts;
  private readonly level: number;
  private readonly message: string;

  constructor(private readonly logger: Logger) {
    this.parts = logger as unknown as PinoParts;
    this.level = logger.levels.values.info as number;
    this.message = `,${JSON.stringify(this.parts[pino.symbols.messageKeySym])}:"request"`;
  }

  /** Asked per request: the level can change while the process runs. */
  get enabled(): boolean {
    return this.logger.isLevelEnabled('info');
  }

  record(requestId: string, method: string, path: string, status: number, ms: number): void {
    const p = this.parts;
    this.pending +=
      `${p[pino.symbols.lsCacheSym][this.level] as string}${p[pino.symbols.timeSym]()}${p[pino.symbols.chindingsSym]}` +
      `,"requestId":${JSON.stringify(requestId)},"method":${JSON.stringify(method)},"path":${JSON.stringify(path)},"status":${status},"ms":${Number.isFinite(ms) ? ms : null}` +
      `${this.message}${p[pino.symbols.endSym]}`;
    if (!this.scheduled) {
      this.scheduled = true;
      // After the I/O callbacks of this turn: every request answered in it shares the write.
      setImmediate(this.flush);
    }
  }

  /** Writes what is pending; runs once per turn in which a request was answered. */
  readonly flush = (): void => {
    this.scheduled = false;
    if (this.pending === '') return;
    const lines = this.pending;
    this.pending = '';
    this.parts[pino.symbols.streamSym].write(lines);
  };
}
