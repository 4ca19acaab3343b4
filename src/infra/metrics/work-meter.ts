/**
 * Where the CPU of the event path goes, kept as plain numbers where the work happens and read
 * only when /metrics is scraped (issue 31): the CPU profile of a burst is flat, and async stacks
 * hang most of the work under the microtask queue, so time per stage is measured in place with
 * `performance.now()` pairs around synchronous work. Nothing is allocated per event: each lane's
 * record is made once and its fields are added to.
 */

/** One projection's synchronous work and how often it was woken, since start. */
export class LaneWork {
  /** Turning events into writes (apply and the runner's loop around it). */
  foldMs = 0;
  /** The document store's own synchronous work for the lane's writes (copy, transaction body, settle). */
  writeMs = 0;
  /** Positions moved, waiters released and the projection's commit hook. */
  advanceMs = 0;
  /** Batches handed to the lane; `ignoredBatches` of them held no event of its types. */
  batches = 0;
  ignoredBatches = 0;
  /** Events handed to the lane; `ignoredEvents` of them were not of its types. */
  events = 0;
  ignoredEvents = 0;
  /** Document store batches written (read model writes and stored checkpoints), and the write operations in them. */
  writes = 0;
  ops = 0;
}

/** A stage outside the projections (an HTTP route's handler, the realtime hub, a webhook attempt). */
export class StageWork {
  ms = 0;
  count = 0;

  /** Adds the time since `started` (a `performance.now()` reading). */
  since(started: number): void {
    this.ms += performance.now() - started;
    this.count++;
  }
}

export class WorkMeter {
  private readonly laneWork = new Map<string, LaneWork>();
  private readonly stageWork = new Map<string, StageWork>();

  /** The record of one projection, the same every time it is asked for. */
  lane(name: string): LaneWork {
    let work = this.laneWork.get(name);
    if (!work) this.laneWork.set(name, (work = new LaneWork()));
    return work;
  }

  stage(name: string): StageWork {
    let work = this.stageWork.get(name);
    if (!work) this.stageWork.set(name, (work = new StageWork()));
    return work;
  }

  lanes(): ReadonlyMap<string, LaneWork> {
    return this.laneWork;
  }

  stages(): ReadonlyMap<string, StageWork> {
    return this.stageWork;
  }
}
