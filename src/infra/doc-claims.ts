import type { Clock } from './clock.js';
import type { DocumentStore, Filter } from './docstore/port.js';

/**
 * What a claimed document carries while a node works on it. A job document (a webhook retry, a
 * helpdesk job, a queued send) is claimed by one conditional single-document write, so two nodes
 * sharing the document store never carry out the same job at once, and a node that dies leaves
 * claims that simply lapse: another node takes the job when `claim_until` has passed.
 */
export interface ClaimFields {
  claim_node?: string | null;
  claim_token?: string | null;
  claim_until?: number;
}

export interface Claim {
  /** Added to the filter of every write that ends the job: a node whose claim lapsed and was taken over then changes nothing. */
  readonly fence: Filter;
  /** Set with the write that ends the job: the claim ends with it. */
  readonly ended: ClaimFields;
  /** When the claim lapses unless renewed (epoch ms; Infinity on one node). */
  readonly until: number;
  /** Keeps the claim during long work; false once another node has it. */
  renew(): Promise<boolean>;
  /** Lets another node take the job at once (the job was not done). */
  release(): Promise<void>;
}

export interface DocClaims {
  /** False on one node: nothing is written and every claim is granted. */
  readonly shared: boolean;
  /** Claims document `id` of `collection` when it still matches `filter` and no other node holds a live claim on it. */
  claim(collection: string, id: string, filter?: Filter): Promise<Claim | null>;
  /** The document, as read, is claimed by another node right now: a reader steps over it. */
  heldElsewhere(doc: ClaimFields | Readonly<Record<string, unknown>>): boolean;
}

const granted: Claim = { fence: {}, ended: {}, until: Infinity, renew: async () => true, release: async () => undefined };

/** One process owns the store (the embedded default): every job is this process's. */
export const singleNodeClaims: DocClaims = {
  shared: false,
  claim: async () => granted,
  heldElsewhere: () => false,
};

/** Claims in the shared document store, each lasting `ttlMs` unless renewed. */
export class ExpiringDocClaims implements DocClaims {
  readonly shared = true;
  private counter = 0;

  constructor(
    private readonly docs: DocumentStore,
    private readonly nodeId: string,
    private readonly clock: Clock,
    private readonly ttlMs: number,
  ) {}

  async claim(collection: string, id: string, filter: Filter = {}): Promise<Claim | null> {
    const now = this.clock.now().getTime();
    const token = `${this.nodeId}#${++this.counter}`;
    const until = now + this.ttlMs;
    const col = this.docs.collection(collection);
    // Free: never claimed, lapsed, or ours already (a claim this node left behind, say after a failed write).
    const free = { $or: [{ claim_until: { $exists: false } }, { claim_until: { $lte: now } }, { claim_node: this.nodeId }] };
    const taken = await col.updateOne({ $and: [{ _id: id }, filter, free] }, { $set: { claim_node: this.nodeId, claim_token: token, claim_until: until } }, { durable: true });
    if (taken.matchedCount !== 1) return null;
    const mine = { _id: id, claim_token: token };
    const claim = {
      fence: { claim_token: token },
      ended: { claim_node: null, claim_token: null, claim_until: 0 },
      until,
      renew: async () => {
        const next = this.clock.now().getTime() + this.ttlMs;
        const renewed = await col.updateOne(mine, { $set: { claim_until: next } }, { durable: true });
        if (renewed.matchedCount === 1) claim.until = next;
        return renewed.matchedCount === 1;
      },
      release: async () => {
        await col.updateOne(mine, { $set: claim.ended });
      },
    };
    return claim;
  }

  heldElsewhere(doc: ClaimFields | Readonly<Record<string, unknown>>): boolean {
    return typeof doc.claim_until === 'number' && doc.claim_until > this.clock.now().getTime() && doc.claim_node !== this.nodeId;
  }
}
