import type { RootDatabase } from 'lmdb';

interface Queued {
  run(): void;
  succeed(): void;
  fail(error: unknown): void;
}

/**
 * Group commit: every write submitted while a commit is pending joins one transaction, and all
 * of them are acknowledged after one flush. lmdb's overlappingSync resolves a transaction when it
 * commits, before its fsync, so acknowledgement waits for `flushed` as well.
 *
 * The batch runs in one child transaction: a work function that throws aborts the whole batch
 * and fails every write in it, so a bug can never leave half an append behind. Expected
 * rejections (a wrong expected revision) are therefore results, not exceptions.
 */
export class GroupCommit {
  private queue: Queued[] = [];
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly env: RootDatabase) {}

  /** Resolves with `work`'s result once the transaction it ran in is on disk. */
  submit<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let result: T;
      const first = this.queue.length === 0;
      this.queue.push({
        run: () => {
          result = work();
        },
        succeed: () => resolve(result),
        fail: reject,
      });
      if (first) this.track(this.commit());
    });
  }

  /** Waits until every submitted write has been acknowledged or failed. */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  private track(commit: Promise<void>): void {
    this.inFlight.add(commit);
    void commit.finally(() => this.inFlight.delete(commit));
  }

  private async commit(): Promise<void> {
    let batch: Queued[] | undefined;
    try {
      // The queue is taken when lmdb runs the callback, not now: everything submitted until the
      // write lock is ours rides along in the same commit.
      await this.env.childTransaction(() => {
        batch = this.queue;
        this.queue = [];
        for (const queued of batch) queued.run();
      });
      await this.env.flushed;
    } catch (error) {
      if (batch === undefined) {
        batch = this.queue;
        this.queue = [];
      }
      for (const queued of batch) queued.fail(error);
      return;
    }
    for (const queued of batch ?? []) queued.succeed();
  }
}
