/** What a rebuild reports while it replays the log. */
export interface Progress {
  start(headPosition: bigint): void;
  advance(position: bigint, events: number): void;
  end(events: number, seconds: number): void;
}

export const silentProgress: Progress = { start() {}, advance() {}, end() {} };

const WIDTH = 30;
const LINE_EVERY_MS = 2_000;
const BAR_EVERY_MS = 100;

/**
 * A bar with rate and time left on a terminal; a plain line every two seconds otherwise (logs,
 * CI). The fraction done is by log position, which every event store keeps increasing.
 */
export class StreamProgress implements Progress {
  private head = 0;
  private started = 0;
  private shown = 0;

  constructor(private readonly out: NodeJS.WriteStream | { write(s: string): unknown; isTTY?: boolean }) {}

  start(headPosition: bigint): void {
    this.head = Number(headPosition);
    this.started = performance.now();
    this.shown = 0;
  }

  advance(position: bigint, events: number): void {
    const now = performance.now();
    const tty = this.out.isTTY === true;
    if (now - this.shown < (tty ? BAR_EVERY_MS : LINE_EVERY_MS)) return;
    this.shown = now;
    const elapsed = (now - this.started) / 1000;
    const done = this.head > 0 ? Math.min(1, Number(position) / this.head) : 1;
    const rate = events / Math.max(elapsed, 1e-3);
    const left = done > 0 ? (elapsed / done) * (1 - done) : 0;
    const text = `${(done * 100).toFixed(1).padStart(5)}%  ${events.toLocaleString('en')} events  ${Math.round(rate).toLocaleString('en')} events/s  ${left.toFixed(1)} s left`;
    if (tty) {
      const filled = Math.round(done * WIDTH);
      this.out.write(`\r[${'#'.repeat(filled)}${'-'.repeat(WIDTH - filled)}] ${text}`);
    } else this.out.write(`replay ${text}\n`);
  }

  end(events: number, seconds: number): void {
    const rate = Math.round(events / Math.max(seconds, 1e-3));
    this.out.write(`${this.out.isTTY === true ? '\r\x1b[K' : ''}replayed ${events.toLocaleString('en')} events in ${seconds.toFixed(2)} s (${rate.toLocaleString('en')} events/s)\n`);
  }
}
