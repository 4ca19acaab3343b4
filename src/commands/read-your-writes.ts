import type { ProjectionRunner } from '../projections/runner.js';

/** The runner, or on many nodes whatever answers from the stored checkpoints (cluster/leased-projections.ts). */
export type ProjectionWaits = Pick<ProjectionRunner, 'waitFor'>;

/** Lets a command answer only once the read models its caller will read next have caught up. */
export class ReadYourWrites {
  constructor(
    private readonly runner: ProjectionWaits,
    private readonly timeoutMs: number,
  ) {}

  async settle(position: bigint | null, projections: readonly string[]): Promise<void> {
    if (position === null) return;
    // A timeout still answers: the write is durable, only the read model is late.
    await this.runner.waitFor(position, projections, this.timeoutMs);
  }
}
