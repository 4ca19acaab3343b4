import { notFound } from '../domain/errors.js';
import type { DeliveryRepo } from './deliveries/delivery-repo.js';
import type { DeliveryDoc, DeliveryStatus } from './deliveries/documents.js';

export interface DeliveryView {
  id: string;
  event_id: string;
  type: string;
  status: DeliveryStatus;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
  next_attempt_at: string | null;
}

export interface DeliveryPageView {
  page: number;
  page_size: number;
  total: number;
  total_pages: number;
  content: DeliveryView[];
}

/** What the delivery routes need: the log, read newest first, and a hand-made retry. */
export class DeliveryLog {
  constructor(
    private readonly repo: DeliveryRepo,
    /** The dispatcher's hand-made retry (it knows whether an attempt is in flight). */
    private readonly retryByHand: (delivery: DeliveryDoc) => Promise<DeliveryStatus>,
  ) {}

  async page(instanceId: string, page: number, pageSize: number, status?: DeliveryStatus): Promise<DeliveryPageView> {
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

function present(d: DeliveryDoc): DeliveryView {
  return {
    id: d._id,
    event_id: d.event_id,
    type: d.type,
    status: d.status,
    attempts: d.attempts,
    last_status_code: d.last_status_code,
    last_error: d.last_error,
    created_at: d.created_at,
    delivered_at: d.delivered_at,
    next_attempt_at: d.next_attempt_at,
  };
}
