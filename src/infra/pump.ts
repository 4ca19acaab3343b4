/**
 * Runs `work` whenever poked, never twice at once: a poke during a run makes one more run right
 * after it. Between pokes it runs again on its own after the delay the last run answered, so due
 * times are met without polling faster than needed. A failed run is reported and retried after
 * a second. For workers that carry out durable jobs (the helpdesk bridge, queued sends).
 */
export class Pump {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;

  constructor(
    /** Does what is due; answers how long until it should look again (ms). */
    private readonly work: () => Promise<number>,
    private readonly onError: (err: unknown) => void,
  ) {}

  poke(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.again = false;
    this.running = this.work()
      .catch((err: unknown) => {
        this.onError(err);
        return 1000;
      })
      .then((waitMs) => {
        this.running = null;
        if (this.again) this.poke();
        else this.schedule(waitMs);
      });
  }

  /** True once stop() was called: a long run should end early. */
  get stopping(): boolean {
    return this.stopped;
  }

  /** Lets a run under way finish; nothing runs after. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.poke(), Math.max(10, ms));
    this.timer.unref();
  }
}
