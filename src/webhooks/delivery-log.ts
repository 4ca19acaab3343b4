import type { Static } from '@sinclair/typebox';
import type { Delivery, DeliveryPage } from '../api/schemas/webhook-deliveries.js';
import { notFound } from '../domain/errors.js';
import type { DeliveryRepo } from './deliveries/delivery-repo.js';
import { statusOf, type DeliveryDoc, type DeliveryStatus } from './deliveries/documents.js';

/** What the delivery routes need: the log, read newest first, and a hand-made retry. */
export class DeliveryLog {
  constructor(
    private readonly repo: DeliveryRepo,
    /** The dispatcher's hand-made retry (it knows whether an attempt is in flight). */
    private readonly retryByHand: (delivery: DeliveryDoc) => Promise<DeliveryStatus>,
  ) {}

  /** The route's documented answer (CONTRACT.md, Webhooks), fields in its order. */
  async page(instanceId: string, page: number, pageSize: number, status?: DeliveryStatus): Promise<Static<typeof DeliveryPage>> {
    const { total, items } = await this.repo.page(instanceId, status, page, pageSize);
    return { page, page_size: pageSize, total, total_pages: Math.ceil(total / pageSize), content: items.map(present) };
  }

  /** Makes the delivery due now; 404 when the instance has no such delivery. */
  async retry(instanceId: string, deliveryId: string): Promise<{ status: DeliveryStatus }> {
    const delivery = await this.repo.get(deliveryId);
    if (!delivery || delivery.instance_id !== instanceId) throw notFound('delivery not found');
    return { status: await this.retryByHand(delivery) };
  }
}

function present(d: DeliveryDoc): Static<typeof Delivery> {
  return {
    id: d._id,
    event_id: d.event_id,
    type: d.type,
    status: statusOf(d.state),
    attempts: d.attempts,
    last_status_code: d.last_status_code,
    last_error: d.last_error,
    created_at: d.created_at,
    delivered_at: d.delivered_at,
    next_attempt_at: d.next_attempt_at,
  };
}
