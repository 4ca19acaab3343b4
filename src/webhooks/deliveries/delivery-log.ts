import { notFound } from '../../domain/errors.js';
import type { DeliveryRepo } from './delivery-repo.js';
import type { DeliveryDoc, DeliveryStatus } from './documents.js';

/** What the delivery routes need: the log, read newest first, and a hand-made retry. */
export class DeliveryLog {
  constructor(
    private readonly repo: DeliveryRepo,
    /** The dispatcher's hand-made retry (it knows whether an attempt is in flight). */
    private readonly retryByHand: (delivery: DeliveryDoc) => Promise<DeliveryStatus>,
  ) {}

  /** One page of an instance's deliveries, newest first, and how many there are in all. */
  page(instanceId: string, page: number, pageSize: number, status?: DeliveryStatus): Promise<{ total: number; items: DeliveryDoc[] }> {
    return this.repo.page(instanceId, status, page, pageSize);
  }

  /** Makes the delivery due now; 404 when the instance has no such delivery. */
  async retry(instanceId: string, deliveryId: string): Promise<{ status: DeliveryStatus }> {
    const delivery = await this.repo.get(deliveryId);
    if (!delivery || delivery.instance_id !== instanceId) throw notFound('delivery not found');
    return { status: await this.retryByHand(delivery) };
  }
}
