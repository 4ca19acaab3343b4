import type { DeliveryDoc } from '../deliveries/documents.js';
import type { Stub } from './scheduler.js';

/**
 * Deliveries this process holds: waiting in memory, in flight, or with an outcome not yet
 * committed. The loaders skip them, so the log read after an attempt but before its outcome is
 * written cannot hand the same delivery out twice.
 */
export class Known {
  private readonly ids = new Set<string>();
  private readonly retriesPerHost = new Map<string, number>();

  has(id: string): boolean {
    return this.ids.has(id);
  }

  /** Retrying deliveries of a host held by this process (the head of its retry queue in the log). */
  retries(host: string): number {
    return this.retriesPerHost.get(host) ?? 0;
  }

  hold(stub: Stub): void {
    this.ids.add(stub.id);
    if (stub.state === 'retrying') this.retriesPerHost.set(stub.host, this.retries(stub.host) + 1);
  }

  release(stub: Stub): void {
    if (!this.ids.delete(stub.id)) return;
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
