import type { RootDatabase } from 'lmdb';

/** One submitted write: its work, its result once run, and how to answer its submitter. */
interface Queued {
  work: () => unknown;
  result: unknown;
  resolve: (result: unknown) => void;
  reject: (error: unknown) => void;
}

/** What the owner of the in-memory state does around one batch, inside its write transaction. */
export interface BatchScope {
  /**
   * After the batch's last work function: writes what the batch changed as a whole, once per
   * batch rather than once per write. Throwing aborts the batch like a throwing work function.
   */
  end(): void;
  /**
   * Undoes whatever in-memory state the batch's work changed; runs, synchronously, if the batch
   * aborts, before lmdb hands the transaction to anything else.
   */
  undo(): void;
}

export interface BatchHooks {
  /** Called in the write transaction before a batch runs. */
  begin(): BatchScope;
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
      const first = this.queue.length === 0;
      // A plain record rather than closures around the result: one allocation per write.
      this.queue.push({ work, result: undefined, resolve: resolve as (result: unknown) => void, reject });
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
        const scope = this.hooks.begin();
        try {
          for (const queued of batch) queued.result = queued.work();
          scope.end();
        } catch (error) {
          aborted = true;
          scope.undo();
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
      for (const queued of batch) queued.reject(error);
      return;
    }
    for (const queued of batch ?? []) queued.resolve(queued.result);
  }
}

function brokenBy(cause: unknown): Error {
  return new Error('event store: a commit failed; reopen the store to continue from what is on disk', { cause });
}
