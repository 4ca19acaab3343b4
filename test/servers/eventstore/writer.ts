/**
 * The test server's writer: like EventStoreDB's, one queue for every write, whatever call it came
 * on. Writes queued while a flush is in progress are committed together by the next one (group
 * commit) and acknowledged only after their flush. The flush itself costs `flushMs` (0: one turn
 * of the event loop), a stand-in for the disk a real server waits for.
 */
export class Writer {
  private queue: Array<() => void> = [];
  private flushing = false;

  /** Flushes done, each committing one group of writes. */
  commits = 0;

  constructor(private readonly flushMs: number) {}

  /** Runs `work` with the next group and resolves with its result once that group is flushed. */
  submit<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push(() => {
        try {
          const result = work();
          this.afterFlush(() => resolve(result));
        } catch (error) {
          reject(error);
        }
      });
      if (!this.flushing) this.flush();
    });
  }

  private acknowledgements: Array<() => void> = [];

  private afterFlush(acknowledge: () => void): void {
    this.acknowledgements.push(acknowledge);
  }

  private flush(): void {
    this.flushing = true;
    // Writes arriving during this turn still join the group.
    setImmediate(() => {
      const group = this.queue;
      this.queue = [];
      for (const write of group) write();
      const acknowledgements = this.acknowledgements;
      this.acknowledgements = [];
      this.commits++;
      const done = () => {
        for (const acknowledge of acknowledgements) acknowledge();
        if (this.queue.length > 0) this.flush();
        else this.flushing = false;
      };
      if (this.flushMs > 0) setTimeout(done, this.flushMs);
      else setImmediate(done);
    });
  }
}
