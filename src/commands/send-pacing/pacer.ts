export interface PacingSettings {
  /** Sends per minute per instance; null: unlimited (the sandbox's default). */
  perMinute: number | null;
  /** Up to this much is added at random to each gap, so sends do not tick like a machine. */
  jitterMs: number;
  random?: () => number;
}

/**
 * When each instance may send next (CONTRACT.md, Operations: send pacing). The network bans
 * numbers that send in bursts, so sends are spaced by 60 s / rate plus jitter. A send goes at once
 * only when nothing of its instance waits and its turn has come; otherwise it queues behind.
 */
export class SendPacer {
  private readonly next = new Map<string, number>();
  private readonly waiting = new Map<string, number>();

  constructor(
    private readonly settings: PacingSettings,
    private readonly nowMs: () => number,
  ) {}

  get paced(): boolean {
    return this.settings.perMinute !== null;
  }

  /** True, with the turn taken, when a send may go now; false when it must queue. */
  tryNow(instanceId: string): boolean {
    if (!this.paced) return true;
    if ((this.waiting.get(instanceId) ?? 0) > 0 || this.readyInMs(instanceId) > 0) return false;
    this.taken(instanceId);
    return true;
  }

  /** How long until the instance's next send may go. */
  readyInMs(instanceId: string): number {
    return Math.max(0, (this.next.get(instanceId) ?? 0) - this.nowMs());
  }

  queued(instanceId: string, n = 1): void {
    this.waiting.set(instanceId, (this.waiting.get(instanceId) ?? 0) + n);
  }

  /** A queued send went out (or was given up): its turn is taken and it waits no more. */
  dequeued(instanceId: string, sent: boolean): void {
    const left = (this.waiting.get(instanceId) ?? 1) - 1;
    if (left > 0) this.waiting.set(instanceId, left);
    else this.waiting.delete(instanceId);
    if (sent) this.taken(instanceId);
  }

  private taken(instanceId: string): void {
    if (!this.settings.perMinute) return;
    const gap = 60_000 / this.settings.perMinute + (this.settings.random ?? Math.random)() * this.settings.jitterMs;
    this.next.set(instanceId, this.nowMs() + gap);
  }
}
