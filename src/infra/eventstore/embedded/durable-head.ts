/**
 * The last position known to be on disk. Readers never look past it, so nothing is observable
 * (reads, subscriptions) before the append that wrote it has been acknowledged.
 */
export class DurableHead {
  private readonly waiters = new Set<() => void>();

  constructor(private position: number) {}

  get value(): number {
    return this.position;
  }

  /** Commits are flushed in order, so a later flush also covers every earlier position. */
  advance(position: number): void {
    if (position <= this.position) return;
    this.position = position;
    if (this.waiters.size === 0) return;
    const woken = [...this.waiters];
    this.waiters.clear();
    for (const wake of woken) wake();
  }

  /** Resolves once the head is past `position`, or as soon as `signal` aborts. */
  waitBeyond(position: number, signal: AbortSignal): Promise<void> {
    if (this.position > position || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = (): void => {
        this.waiters.delete(wake);
        signal.removeEventListener('abort', wake);
        resolve();
      };
      this.waiters.add(wake);
      signal.addEventListener('abort', wake, { once: true });
    });
  }
}
