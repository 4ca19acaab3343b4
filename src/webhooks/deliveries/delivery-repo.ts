import type { DocumentStore, Filter, WriteOp } from '../../infra/docstore/port.js';
import { DELIVERIES, HOOKS, type DeliveryDoc, type DeliveryStatus, type HookDoc } from './documents.js';

/** Hosts that may have retrying deliveries, so a restart knows which retry queues to read. */
export const RETRY_HOSTS = 'webhook_retry_hosts';

export const registerRetryHost = (host: string): WriteOp => ({
  collection: RETRY_HOSTS,
  op: 'replaceOne',
  filter: { _id: host },
  doc: { _id: host },
  upsert: true,
});

/** Every read and hand-made change of the delivery log; the dispatcher's outcomes are in outcomes.ts. */
export class DeliveryRepo {
  constructor(private readonly docs: DocumentStore) {}

  get(id: string): Promise<DeliveryDoc | null> {
    return this.docs.collection<DeliveryDoc>(DELIVERIES).findOne({ _id: id });
  }

  hook(instanceId: string): Promise<HookDoc | null> {
    return this.docs.collection<HookDoc>(HOOKS).findOne({ _id: instanceId });
  }

  async instancesWithHooks(): Promise<string[]> {
    return (await this.docs.collection<HookDoc>(HOOKS).find({})).map((h) => h._id);
  }

  /** One instance's queued deliveries after `afterSeq`, in seq order. */
  laneBatch(instanceId: string, afterSeq: number, limit: number): Promise<DeliveryDoc[]> {
    return this.docs
      .collection<DeliveryDoc>(DELIVERIES)
      .find({ instance_id: instanceId, state: 'queued', seq: { $gt: afterSeq } }, { sort: { seq: 1 }, limit });
  }

  /** One host's retrying deliveries, earliest due first. */
  hostRetries(host: string, limit: number): Promise<DeliveryDoc[]> {
    return this.docs.collection<DeliveryDoc>(DELIVERIES).find({ state: 'retrying', host }, { sort: { due_ms: 1 }, limit });
  }

  async retryHosts(): Promise<string[]> {
    return (await this.docs.collection(RETRY_HOSTS).find({})).map((h) => h._id);
  }

  async forgetRetryHostIfIdle(host: string): Promise<boolean> {
    if ((await this.hostRetries(host, 1)).length > 0) return false;
    await this.docs.collection(RETRY_HOSTS).deleteOne({ _id: host });
    return true;
  }

  async page(instanceId: string, status: DeliveryStatus | undefined, page: number, size: number) {
    const filter: Filter = { instance_id: instanceId };
    if (status) filter.status = status;
    const deliveries = this.docs.collection<DeliveryDoc>(DELIVERIES);
    const [total, items] = await Promise.all([
      deliveries.count(filter),
      deliveries.find(filter, { sort: { seq: -1 }, skip: (page - 1) * size, limit: size }),
    ]);
    return { total, items };
  }

  /**
   * Makes a delivery due now, whatever its state, with a fresh retry horizon. Returns the
   * delivery as changed, or null when the instance has no such delivery.
   */
  async retryNow(instanceId: string, id: string, nowMs: number): Promise<DeliveryDoc | null> {
    const deliveries = this.docs.collection<DeliveryDoc>(DELIVERIES);
    const current = await deliveries.findOne({ _id: id, instance_id: instanceId });
    if (!current) return null;
    const at = new Date(nowMs).toISOString();
    await this.docs.batch([
      {
        collection: DELIVERIES,
        op: 'updateOne',
        filter: { _id: id },
        update: {
          $set: { state: 'retrying', status: 'pending', due_ms: nowMs, next_attempt_at: at, horizon_from_ms: nowMs },
          $inc: { rev: 1 },
        },
      },
      registerRetryHost(current.host),
    ]);
    return { ...current, state: 'retrying', status: 'pending', due_ms: nowMs, next_attempt_at: at, horizon_from_ms: nowMs, rev: current.rev + 1 };
  }
}
