import type { RootDatabase } from 'lmdb';

interface Queued {
  run(): void;
  succeed(): void;
  fail(error: unknown): void;
}

export interface BatchHooks {
  /**
   * Called in the write transaction before a batch runs. Returns the undo of whatever in-memory
   * state the batch's work changes; it runs, synchronously, if the batch aborts, before lmdb
   * hands the transaction to anything else.
   */
  begin(): () => void;
}

/**
 * Group commit: every write submitted while a commit is pending joins one transaction, and all
 * of them are acknowledged after one flush. lmdb's overlappingSync resolves a transaction when it
 * commits, before its fsync, so acknowledgement waits for `flushed` as well.
 *
 * The batch runs in one child transaction: a work function that throws aborts the whole batch
 * and fails every write in it, so a bug can never leave half an append behind. Expected
 * rejections (a wrong expected revision) are therefore results, not exceptions.
 *
 * If lmdb fails to commit a batch whose work succeeded, the in-memory state its work changed is
 * ahead of the disk; every later write then fails until the store is reopened from disk.
 */
export class GroupCommit {
  private queue: Queued[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private broken?: Error;

  constructor(
    private readonly env: RootDatabase,
    private readonly hooks: BatchHooks,
  ) {}

  /** Resolves with `work`'s result once the transaction it ran in is on disk. */
  submit<T>(work: () => T): Promise<T> {
    if (this.broken) return Promise.reject(this.broken);
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
    let aborted = false;
    try {
      // The queue is taken when lmdb runs the callback, not now: everything submitted until the
      // write lock is ours rides along in the same commit.
      await this.env.childTransaction(() => {
        batch = this.queue;
        this.queue = [];
        if (this.broken) throw this.broken;
        const undo = this.hooks.begin();
        try {
          for (const queued of batch) queued.run();
        } catch (error) {
          aborted = true;
          undo();
          throw error;
        }
      });
      await this.env.flushed;
    } catch (error) {
      if (batch === undefined) {
        batch = this.queue;
        this.queue = [];
      }
      if (!aborted && !this.broken) this.broken = brokenBy(error);
      for (const queued of batch) queued.fail(error);
      return;
    }
    for (const queued of batch ?? []) queued.succeed();
  }
}

function brokenBy(cause: unknown): Error {
  return new Error('event store: a commit failed; reopen the store to continue from what is on disk', { cause });
}
