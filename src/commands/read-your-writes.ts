/**
 * What read-your-writes needs of the projections: a wait until the named ones have committed a
 * log position (the projection runner answers it). Declared here, beside its one user, so the
 * command side does not depend on the runner.
 */
export interface ProjectionProgress {
  waitFor(position: bigint, projections: readonly string[], timeoutMs: number): Promise<boolean>;
}

/** Lets a command answer only once the read models its caller will read next have caught up. */
export class ReadYourWrites {
  constructor(
    private readonly runner: ProjectionProgress,
    private readonly timeoutMs: number,
  ) {}

  async settle(position: bigint | null, projections: readonly string[]): Promise<void> {
    if (position === null) return;
    // A timeout still answers: the write is durable, only the read model is late.
    await this.runner.waitFor(position, projections, this.timeoutMs);
  }
}
