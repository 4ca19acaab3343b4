import type { DeliveryDoc } from '../deliveries/documents.js';

/**
 * Which delivery goes next, in memory only (the delivery log is the durable truth):
 * - first attempts of an instance start in seq order (a lane per instance), up to `perInstance`
 *   of them in flight together (1 is the strictly ordered mode); receivers order by seq;
 * - retries run in any order;
 * - at most `perHost` attempts are in flight per receiver origin and `global` in all, and hosts
 *   take turns for free slots, so a slow receiver fills its own slots and nobody else's.
 */

export interface Stub {
  /** The delivery as read or decided; while this process holds it, nothing else writes it. */
  doc: DeliveryDoc;
  id: string;
  instanceId: string;
  seq: number;
  host: string;
  state: 'queued' | 'retrying';
}

export interface Work {
  stub: Stub;
  first: boolean;
}

export interface SchedulerLimits {
  /** First attempts of one instance in flight together; 1 sends them strictly one after another. */
  perInstance: number;
  perHost: number;
  global: number;
  /** First attempts held in memory per instance; the rest wait in the log. */
  laneHeld: number;
  /** Retries held in memory per host; the rest wait in the log. */
  hostRetriesHeld: number;
}

export class Lane {
  readonly queue: Stub[] = [];
  /** First attempts of this lane in flight. */
  inFlight = 0;
  /** Waiting in its host's turn for a slot (at most once at a time, so lanes of a host alternate). */
  offered = false;
  /** Highest seq ever taken into the lane: the log is read after it. */
  maxSeq = 0;
  /** The log may hold queued deliveries after maxSeq that the lane has not taken (true until first read). */
  more = true;
  loading = false;
  reloadWanted = false;
  /**
   * A queued delivery after maxSeq that a read could not take because this process still holds it
   * (an attempt of an earlier hold of the lane, aborted and not yet ended): the lane stops before
   * it and is read again once that hold ends (LaneLoader.released).
   */
  waitingFor: string | null = null;

  constructor(readonly instanceId: string) {}
}

type Waiting = { kind: 'lane'; lane: Lane } | { kind: 'retry'; stub: Stub };

class Host {
  inFlight = 0;
  retriesHeld = 0;
  readonly waiting: Waiting[] = [];
  head = 0;

  get pending(): number {
    return this.waiting.length - this.head;
  }

  shift(): Waiting | undefined {
    const next = this.waiting[this.head];
    if (next === undefined) return undefined;
    this.head++;
    // Compact now and then instead of shifting an array on every take.
    if (this.head > 1024 && this.head * 2 > this.waiting.length) {
      this.waiting.splice(0, this.head);
      this.head = 0;
    }
    return next;
  }
}

export class Scheduler {
  readonly lanes = new Map<string, Lane>();
  private readonly hosts = new Map<string, Host>();
  /** Hosts with waiting work, in turn order. */
  private readonly turns: string[] = [];
  private readonly inTurns = new Set<string>();
  private running = 0;

  constructor(private readonly limits: SchedulerLimits) {}

  lane(instanceId: string): Lane {
    let lane = this.lanes.get(instanceId);
    if (!lane) this.lanes.set(instanceId, (lane = new Lane(instanceId)));
    return lane;
  }

  /** Room left in a lane's in-memory queue. */
  laneRoom(lane: Lane): number {
    return this.limits.laneHeld - lane.queue.length;
  }

  /** A lane down to a quarter of what it may hold is worth topping up from the log. */
  laneLow(lane: Lane): boolean {
    return lane.queue.length * 4 <= this.limits.laneHeld;
  }

  retryRoom(host: string): number {
    return this.limits.hostRetriesHeld - (this.hosts.get(host)?.retriesHeld ?? 0);
  }

  /** Takes a queued delivery into its lane (stubs must arrive in seq order); false if the lane is already past it. */
  addFirst(stub: Stub): boolean {
    const lane = this.lane(stub.instanceId);
    if (stub.seq <= lane.maxSeq) return false;
    lane.queue.push(stub);
    lane.maxSeq = stub.seq;
    this.offer(lane);
    return true;
  }

  addRetry(stub: Stub): void {
    const host = this.host(stub.host);
    host.retriesHeld++;
    host.waiting.push({ kind: 'retry', stub });
    this.markWaiting(stub.host);
  }

  /** The next attempt to start, or undefined when every slot is taken or nothing waits. */
  next(): Work | undefined {
    if (this.running >= this.limits.global) return undefined;
    for (let tries = this.turns.length; tries > 0; tries--) {
      const name = this.turns.shift() as string;
      const host = this.hosts.get(name) as Host;
      if (host.inFlight >= this.limits.perHost) {
        this.turns.push(name);
        continue;
      }
      const waiting = host.shift() as Waiting;
      if (host.pending > 0) this.turns.push(name);
      else this.inTurns.delete(name);
      if (waiting.kind === 'lane' && waiting.lane.queue.length === 0) {
        // A lane emptied by dropQueued while it waited for its turn: nothing to start, and no try spent.
        waiting.lane.offered = false;
        tries++;
        continue;
      }
      host.inFlight++;
      this.running++;
      if (waiting.kind === 'retry') return { stub: waiting.stub, first: false };
      const lane = waiting.lane;
      lane.offered = false;
      lane.inFlight++;
      const stub = lane.queue.shift() as Stub;
      // Back to the end of its host's turn for the next one: a host's lanes take turns.
      this.offer(lane);
      return { stub, first: true };
    }
    return undefined;
  }

  /** Takes back what a lane holds waiting (not what is in flight): the lane is no longer fed here. */
  dropQueued(lane: Lane): Stub[] {
    return lane.queue.splice(0);
  }

  /** An attempt ended (or was skipped): frees its slot and lets its lane go on. */
  finish(work: Work): void {
    const host = this.host(work.stub.host);
    host.inFlight--;
    this.running--;
    if (!work.first) host.retriesHeld--;
    else {
      const lane = this.lane(work.stub.instanceId);
      lane.inFlight--;
      this.offer(lane);
    }
  }

  private offer(lane: Lane): void {
    const head = lane.queue[0];
    if (lane.inFlight >= this.limits.perInstance || lane.offered || !head) return;
    lane.offered = true;
    this.host(head.host).waiting.push({ kind: 'lane', lane });
    this.markWaiting(head.host);
  }

  private markWaiting(name: string): void {
    if (this.inTurns.has(name)) return;
    this.inTurns.add(name);
    this.turns.push(name);
  }

  private host(name: string): Host {
    let host = this.hosts.get(name);
    if (!host) this.hosts.set(name, (host = new Host()));
    return host;
  }
}
