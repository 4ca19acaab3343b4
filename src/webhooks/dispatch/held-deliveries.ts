import type { DeliveryDoc } from '../deliveries/documents.js';
import type { Stub } from './scheduler.js';

/**
 * Deliveries this process holds: waiting in memory, in flight, or with an outcome not yet
 * committed. The loaders take from the log only what it does not hold, so a read made while an
 * attempt is in flight cannot hand the same delivery out twice.
 *
 * A read can also overlap the end of a hold: it sees the delivery still queued or retrying, then
 * the outcome commits and the hold ends before the read returns. Each read therefore keeps a
 * window of the holds released while it ran, and nothing in it is taken: the log already says
 * otherwise (a delivery recorded delivered is never sent again).
 */
export class HeldDeliveries {
  private readonly ids = new Set<string>();
  private readonly retriesPerHost = new Map<string, number>();
  /** One per read of the log in progress: the ids released since it started. */
  private readonly windows = new Set<Set<string>>();

  has(id: string): boolean {
    return this.ids.has(id);
  }

  /** Retrying deliveries of a host held by this process (the head of its retry queue in the log). */
  retries(host: string): number {
    return this.retriesPerHost.get(host) ?? 0;
  }

  /**
   * Runs a read of the log; answers everything it read (`all`) and what of it this process may
   * take (`free`): neither held now nor released while the read ran.
   */
  async read(query: () => Promise<DeliveryDoc[]>): Promise<{ all: DeliveryDoc[]; free: DeliveryDoc[] }> {
    const released = new Set<string>();
    this.windows.add(released);
    try {
      const all = await query();
      return { all, free: all.filter((doc) => !this.ids.has(doc._id) && !released.has(doc._id)) };
    } finally {
      this.windows.delete(released);
    }
  }

  hold(stub: Stub): void {
    this.ids.add(stub.id);
    if (stub.state === 'retrying') this.retriesPerHost.set(stub.host, this.retries(stub.host) + 1);
  }

  release(stub: Stub): void {
    if (!this.ids.delete(stub.id)) return;
    for (const window of this.windows) window.add(stub.id);
    if (stub.state === 'retrying') {
      const left = this.retries(stub.host) - 1;
      if (left > 0) this.retriesPerHost.set(stub.host, left);
      else this.retriesPerHost.delete(stub.host);
    }
  }

  get size(): number {
    return this.ids.size;
  }
}

export function stubOf(doc: DeliveryDoc): Stub {
  return {
    doc,
    id: doc._id,
    instanceId: doc.instance_id,
    seq: doc.seq,
    host: doc.host,
    state: doc.state === 'queued' ? 'queued' : 'retrying',
  };
}
