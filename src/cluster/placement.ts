import type { Clock } from '../infra/clock.js';
import type { Collection, DocumentStore } from '../infra/docstore/port.js';
import type { Logger } from '../infra/logging/logger.js';
import { repeat } from '../infra/repeat.js';

/** A node's membership document: renewed with its leases, lapsed when it dies, deleted when it stops. */
export type NodeDoc = {
  _id: string;
  /** Its internal address (NODE_URL), null before it listens. */
  address: string | null;
  /** When it joined (ISO). */
  since: string;
  /** Epoch ms (the writer's clock) after which the node counts as gone. */
  expiresAt: number;
  /** What it held at its last renewal (GET /cluster, metrics). */
  sessions: number;
  lanes: number;
};

export const NODES_COLLECTION = 'cluster_nodes';

/** What the node holds now, written with each renewal. */
export interface HeldCounts {
  sessions: number;
  lanes: number;
}

export interface PlacementOptions {
  docs: DocumentStore;
  nodeId: string;
  clock: Clock;
  ttlMs: number;
  logger: Logger;
  /** Set once the node listens. */
  address: () => string | null;
}

/**
 * Which node should hold each session and each lane (issue 34). Every node writes a membership
 * document renewed every quarter of the lease ttl, and reads the live ones; from the same live
 * nodes and the same items (read from the shared stores) every node computes the same placement:
 * balanced rendezvous hashing. Each item ranks the nodes by a hash of (node, item) and goes to the
 * first in its ranking that has room, room being ceil(items / nodes), items taken in id order. Plain
 * rendezvous hashing moves few items when a node joins or leaves but spreads 60 items over 3 nodes
 * only within several items of 20; the cap makes the spread exact (no node above ceil(total/nodes))
 * while keeping most items on their first choice, so a join or a death moves about a node's share.
 * Nodes act on it themselves: they take free items placed on them and release (close, then give the
 * lease back) the ones placed on another live node, which takes them at its next scan; the leases
 * still decide who holds what, so two views that differ for a moment never put an item on two nodes.
 */
export class Placement {
  private readonly col: Collection<NodeDoc>;
  private live: string[];
  private since: string | null = null;
  private timer: NodeJS.Timeout | undefined;
  private counts: () => HeldCounts = () => ({ sessions: 0, lanes: 0 });
  private reading: Promise<void> | null = null;

  constructor(private readonly o: PlacementOptions) {
    this.col = o.docs.collection<NodeDoc>(NODES_COLLECTION);
    this.live = [o.nodeId];
  }

  get nodeId(): string {
    return this.o.nodeId;
  }

  /** Joins: writes the membership document now, then renews it (with the counts) every ttl/4. */
  async start(counts: () => HeldCounts): Promise<void> {
    this.counts = counts;
    await this.heartbeat().catch((err: unknown) => this.o.logger.warn({ err }, 'membership not written; retrying'));
    this.timer = repeat(Math.max(50, Math.floor(this.o.ttlMs / 4)), () => this.heartbeat(), (err) => this.o.logger.warn({ err }, 'membership not renewed'));
  }

  /** Leaves at once (a clean stop): the others rebalance without waiting for the document to lapse. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.col.deleteOne({ _id: this.o.nodeId }).catch(() => undefined);
  }

  /** The live nodes' documents (this one included once written). */
  async nodes(): Promise<NodeDoc[]> {
    const now = this.o.clock.now().getTime();
    return (await this.col.find({ expiresAt: { $gt: now } })).sort((a, b) => (a._id < b._id ? -1 : a._id > b._id ? 1 : 0));
  }

  /** Reads the live nodes again (a scan calls it before deciding); this node always counts. */
  refresh(): Promise<void> {
    this.reading ??= (async () => {
      try {
        const ids = new Set((await this.nodes()).map((n) => n._id));
        ids.add(this.o.nodeId);
        this.live = [...ids].sort();
      } finally {
        this.reading = null;
      }
    })();
    return this.reading;
  }

  /** The live nodes as last read. */
  members(): readonly string[] {
    return this.live;
  }

  /** Where each item goes among the live nodes as last read. */
  assign(items: readonly string[]): Map<string, string> {
    return placeItems(items, this.live);
  }

  private async heartbeat(): Promise<void> {
    const now = this.o.clock.now();
    this.since ??= now.toISOString();
    const counts = this.counts();
    await this.col.updateOne(
      { _id: this.o.nodeId },
      { $set: { address: this.o.address(), since: this.since, expiresAt: now.getTime() + this.o.ttlMs, sessions: counts.sessions, lanes: counts.lanes } },
      { upsert: true },
    );
    await this.refresh();
  }
}

/** FNV-1a, 32 bits: cheap, and the same on every node. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  // A final mix, so that ids differing only in their last characters rank nodes differently.
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h >>> 0;
}

/** Balanced rendezvous hashing (see Placement): deterministic for the same items and nodes. */
export function placeItems(items: readonly string[], nodes: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  if (nodes.length === 0) return out;
  const sorted = [...new Set(items)].sort();
  const room = Math.ceil(sorted.length / nodes.length);
  const load = new Map(nodes.map((n) => [n, 0]));
  for (const item of sorted) {
    const ranked = nodes.map((n) => ({ n, h: hash(`${n}\u0000${item}`) })).sort((a, b) => b.h - a.h || (a.n < b.n ? -1 : 1));
    const chosen = ranked.find((r) => (load.get(r.n) ?? 0) < room) ?? ranked[0]!;
    load.set(chosen.n, (load.get(chosen.n) ?? 0) + 1);
    out.set(item, chosen.n);
  }
  return out;
}
