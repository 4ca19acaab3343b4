/**
 * The decisions a stateful reactor made for its most recent events, by event id. The runner
 * re-feeds events from the last checkpoint when a commit fails; the reactor's in-memory fold has
 * already moved past them, so re-deciding would hand out new seqs against later settings.
 * Returning the remembered decision keeps a replay identical to the first pass.
 */
export class DecisionMemo<T> {
  private readonly entries = new Map<string, T>();

  constructor(private readonly capacity: number) {}

  get(id: string): T | undefined {
    return this.entries.get(id);
  }

  set(id: string, decision: T): void {
    this.entries.set(id, decision);
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }

  clear(): void {
    this.entries.clear();
  }
}
