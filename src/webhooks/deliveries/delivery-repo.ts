import type { DocumentStore, Filter, WriteOp } from '../../infra/docstore/port.js';
import { DELIVERIES, FINAL_STATES, HOOKS, NOT_DELIVERED, STATES_OF, type DeliveryDoc, type DeliveryStatus, type HookDoc } from './documents.js';
import { saveOp } from './outcomes.js';

/** Hosts that may have retrying deliveries, so a restart knows which retry queues to read. */
const RETRY_HOSTS = 'webhook_retry_hosts';

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

  /** One instance's queued deliveries after `afterSeq`, in seq order (a lane's next first attempts). */
  queued(instanceId: string, limit: number, afterSeq: number): Promise<DeliveryDoc[]> {
    return this.docs
      .collection<DeliveryDoc>(DELIVERIES)
      .find({ instance_id: instanceId, state: 'queued', seq: { $gt: afterSeq } }, { sort: { seq: 1 }, limit });
  }

  /**
   * Several instances' queued deliveries in one read, each after its own seq: sorted by instance
   * then seq (the `open` index), at most `limit` in all. A node feeding many lanes reads the log
   * once per commit this way instead of once per instance (issue 34).
   */
  queuedAfter(lanes: readonly { instanceId: string; afterSeq: number }[], limit: number): Promise<DeliveryDoc[]> {
    return this.docs
      .collection<DeliveryDoc>(DELIVERIES)
      .find({ $or: lanes.map((l) => ({ instance_id: l.instanceId, state: 'queued', seq: { $gt: l.afterSeq } })) }, { sort: { instance_id: 1, seq: 1 }, limit });
  }

  /** One instance's oldest deliveries after `afterSeq`, whatever their state (the retention sweep). */
  oldest(instanceId: string, limit: number, afterSeq = 0): Promise<DeliveryDoc[]> {
    return this.docs.collection<DeliveryDoc>(DELIVERIES).find({ instance_id: instanceId, seq: { $gt: afterSeq } }, { sort: { seq: 1 }, limit });
  }

  /** The highest seq among the instance's recorded deliveries (0 for none), off the `log` index. */
  async lastSeq(instanceId: string): Promise<number> {
    const [newest] = await this.docs.collection<DeliveryDoc>(DELIVERIES).find({ instance_id: instanceId }, { sort: { seq: -1 }, limit: 1 });
    return newest?.seq ?? 0;
  }

  /** One host's retrying deliveries, earliest due first. */
  hostRetries(host: string, limit: number): Promise<DeliveryDoc[]> {
    return this.docs.collection<DeliveryDoc>(DELIVERIES).find({ retry_host: host }, { sort: { due_ms: 1 }, limit });
  }

  async retryHosts(): Promise<string[]> {
    return (await this.docs.collection(RETRY_HOSTS).find({})).map((h) => h._id);
  }

  async forgetRetryHostIfIdle(host: string): Promise<boolean> {
    if ((await this.hostRetries(host, 1)).length > 0) return false;
    await this.docs.collection(RETRY_HOSTS).deleteOne({ _id: host });
    return true;
  }

  /**
   * Removes these deliveries of one instance if they are still final, checked inside the write:
   * one retried by hand since it was read is pending again and stays. The instance's hook keeps
   * their highest seq first, since the reactor resumes from the seqs it finds (a removed newest
   * delivery must not hand its seq out again).
   */
  async removeIfFinal(instanceId: string, deliveries: readonly Pick<DeliveryDoc, '_id' | 'seq'>[]): Promise<number> {
    if (deliveries.length === 0) return 0;
    const highest = Math.max(...deliveries.map((d) => d.seq));
    await this.docs.collection<HookDoc>(HOOKS).updateOne({ _id: instanceId }, { $max: { seq: highest } });
    const ids = deliveries.map((d) => d._id);
    return this.docs.collection<DeliveryDoc>(DELIVERIES).deleteMany({ _id: { $in: ids }, state: { $in: [...FINAL_STATES] } });
  }

  async page(instanceId: string, status: DeliveryStatus | undefined, page: number, size: number) {
    const filter: Filter = { instance_id: instanceId };
    if (status) filter.state = STATES_OF[status].length === 1 ? STATES_OF[status][0] : { $in: STATES_OF[status] };
    const deliveries = this.docs.collection<DeliveryDoc>(DELIVERIES);
    const [total, items] = await Promise.all([
      status === 'delivered' ? this.countDelivered(instanceId) : deliveries.count(filter),
      // Delivered ones are read off the 'log' newest first, skipping the few that are not.
      deliveries.find(filter, { sort: { seq: -1 }, skip: (page - 1) * size, limit: size }),
    ]);
    return { total, items };
  }

  /** From index entries alone: all of the instance's deliveries but those the 'open' index holds. */
  private async countDelivered(instanceId: string): Promise<number> {
    const deliveries = this.docs.collection<DeliveryDoc>(DELIVERIES);
    const [all, open] = await Promise.all([
      deliveries.count({ instance_id: instanceId }),
      deliveries.count({ instance_id: instanceId, state: { $in: [...NOT_DELIVERED] } }),
    ]);
    return all - open;
  }

  /**
   * Writes a delivery changed by hand, with the host registered for the retry queues. An upsert:
   * the retention sweep may have removed it since it was read, and a retry already answered
   * "pending" must still happen (once final again, it is swept again). Durable: the answer is an
   * acknowledgement, and nothing in the event log could bring the retry back.
   */
  async save(delivery: DeliveryDoc): Promise<void> {
    await this.docs.batch([saveOp(delivery, { upsert: true }), registerRetryHost(delivery.host)], { durable: true });
  }
}
