/**
 * Runs tasks one at a time in the order they were pushed. Baileys emits events without waiting
 * for listeners; pushing each emission here keeps them in network order however long one append
 * takes. A failing task is reported and the queue moves on.
 */
export class SerialQueue {
  private tail: Promise<void> = Promise.resolve();
  private pending = 0;

  constructor(private readonly onError: (error: unknown) => void) {}

  push(task: () => Promise<void> | void): void {
    this.pending += 1;
    this.tail = this.tail
      .then(task)
      .catch((error: unknown) => {
        try {
          this.onError(error);
        } catch {
          // A broken error reporter must not stall every later task.
        }
      })
      .finally(() => {
        this.pending -= 1;
      });
  }

  /** Resolves when every task pushed so far has run. */
  drain(): Promise<void> {
    return this.tail;
  }

  get size(): number {
    return this.pending;
  }
}
