import type { RootDatabase } from 'lmdb';

/** One submitted write: its work, its result once run, and how to answer its submitter. */
interface Queued {
  work: () => unknown;
  result: unknown;
  resolve: (result: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * The store's writes, acknowledged only once on disk. lmdb's overlappingSync resolves a
 * transaction when it commits, before its fsync, so acknowledgement waits for `flushed` as well.
 *
 * Two ways in, both in one order (lmdb runs its queue of writes and callbacks in the order they
 * were queued):
 * - Appends queue lmdb's asynchronous puts (see applyAppend) and report each put's commit with
 *   `queued`; `durable` then resolves once everything queued so far is committed and flushed.
 *   lmdb writes every put of one event turn in one transaction, encoding on the event loop and
 *   doing the B-tree work on its write thread, as raw `put` does.
 * - Rarer writes (stream metadata, scavenging) `submit` a work function: every one submitted
 *   while a commit is pending joins one child transaction, run on the event loop with the write
 *   lock held; a work function that throws aborts its whole batch and fails every write in it.
 *
 * If lmdb fails to commit, the in-memory state is ahead of the disk; every later write then fails
 * until the store is reopened from disk.
 */
export class GroupCommit {
  private queue: Queued[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private lastQueued: Promise<unknown> = Promise.resolve();
  /** durable()'s promise, and the commit it follows. */
  private durableOf?: Promise<unknown>;
  private durableAfter: Promise<void> = Promise.resolve();
  private broken?: Error;

  constructor(private readonly env: RootDatabase) {}

  /** Throws what broke the store, if a commit failed. */
  assertWritable(): void {
    if (this.broken) throw this.broken;
  }

  /**
   * Takes the promise an asynchronous put returned: its commit. The puts of one transaction share
   * one promise, so this is a comparison per put and a handler per transaction.
   */
  queued(commit: Promise<unknown>): void {
    if (commit === this.lastQueued) return;
    this.lastQueued = commit;
    commit.catch((error: unknown) => {
      this.broken ??= brokenBy(error);
    });
  }

  /**
   * Resolves once every put queued so far is committed and flushed; rejects if a commit failed.
   * Commits are in queue order, so the last one's covers all before it. Every append of one
   * transaction shares one such promise, rather than each waiting on the commit and then asking
   * lmdb for `flushed` (a Promise.all per call) on its own.
   */
  durable(): Promise<void> {
    if (this.durableOf !== this.lastQueued) {
      this.durableOf = this.lastQueued;
      this.durableAfter = flushedAfter(this.lastQueued, this.env);
    }
    return this.durableAfter;
  }

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

  /** Waits until every write submitted or queued has been acknowledged or failed. */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
    await this.durable().catch(() => undefined);
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
        try {
          for (const queued of batch) queued.result = queued.work();
        } catch (error) {
          aborted = true;
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

/** Asks for `flushed` only once the commit is done, so that the flush it waits for covers it. */
async function flushedAfter(commit: Promise<unknown>, env: RootDatabase): Promise<void> {
  await commit;
  await env.flushed;
}

function brokenBy(cause: unknown): Error {
  return new Error('event store: a commit failed; reopen the store to continue from what is on disk', { cause });
}
