import { pino, type Logger } from 'pino';

/** Where pino writes: sonic-boom, a test's Writable, a transport's thread stream. */
interface LineSink {
  write(chunk: string): unknown;
  /** sonic-boom's: writes what it holds before the process exits. */
  flushSync?(): void;
}

/**
 * A busy server writes its access lines at most once per this period: every write to an
 * asynchronous destination goes through libuv's thread pool and back (two thread wake-ups), which
 * cost more than the line itself when each request had its own. A line waits at most this long;
 * a quiet server's goes out in the next turn of the event loop.
 */
export const ACCESS_LOG_GROUP_MS = 10;

/** Logs with lines not yet written, flushed by one 'exit' listener however many apps a process builds. */
const unwritten = new Set<AccessLog>();
let exitHooked = false;
function writeBeforeExit(log: AccessLog): void {
  unwritten.add(log);
  if (exitHooked) return;
  exitHooked = true;
  process.once('exit', () => {
    for (const pending of unwritten) pending.flushBeforeExit();
  });
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
 * bindings and line end), written to the logger's destination in groups (ACCESS_LOG_GROUP_MS).
 *
 * Why not `logger.info`: under wrk that call and its write were the largest cost of an
 * authenticated GET beyond Koa's own (about 10 µs of 78 µs CPU per request). pino walks the
 * object generically, and sonic-boom, while an asynchronous write is under way, appends each line
 * to a pending string and measures that whole string's UTF-8 length again on every write, so a
 * busy server paid for up to 16 KB per line. Here the five fields are serialised straight into
 * one string, and the lines of a busy period reach the destination in one write.
 * The fields are never a credential: a secret path is replaced by its template by the caller.
 */
export class AccessLog {
  private pending = '';
  private scheduled = false;
  private lastWriteMs = -Infinity;
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
    if (this.scheduled) return;
    this.scheduled = true;
    writeBeforeExit(this);
    const waitMs = this.lastWriteMs + ACCESS_LOG_GROUP_MS - performance.now();
    // Quiet: after this turn's I/O callbacks, so the requests answered in it share the write.
    if (waitMs <= 0) setImmediate(this.flush);
    else setTimeout(this.flushWhenDue, Math.ceil(waitMs)).unref();
  }

  /** A timer may fire up to a millisecond early (libuv's loop time is cached): a group is never cut short. */
  private readonly flushWhenDue = (): void => {
    const waitMs = this.lastWriteMs + ACCESS_LOG_GROUP_MS - performance.now();
    if (waitMs > 0) setTimeout(this.flushWhenDue, Math.ceil(waitMs)).unref();
    else this.flush();
  };

  private readonly flush = (): void => {
    this.scheduled = false;
    unwritten.delete(this);
    if (this.pending === '') return;
    const lines = this.pending;
    this.pending = '';
    this.lastWriteMs = performance.now();
    this.parts[pino.symbols.streamSym].write(lines);
  };

  /** At exit, no turn is left: the lines go to the destination, and it writes them at once. */
  flushBeforeExit(): void {
    this.flush();
    try {
      this.parts[pino.symbols.streamSym].flushSync?.();
    } catch {
      // Not ready or already closed: nothing more can be written.
    }
  }
}
