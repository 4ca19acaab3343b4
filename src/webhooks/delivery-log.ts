import { notFound } from '../domain/errors.js';
import type { Clock } from '../infra/clock.js';
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
    private readonly clock: Clock,
    /** Tells the dispatcher a delivery became due. */
    private readonly onRetry: (delivery: DeliveryDoc) => void,
  ) {}

  async page(instanceId: string, page: number, pageSize: number, status?: DeliveryStatus): Promise<DeliveryPageView> {
    const { total, items } = await this.repo.page(instanceId, status, page, pageSize);
    return { page, page_size: pageSize, total, total_pages: Math.ceil(total / pageSize), content: items.map(present) };
  }

  /** Makes the delivery due now; 404 when the instance has no such delivery. */
  async retry(instanceId: string, deliveryId: string): Promise<{ status: DeliveryStatus }> {
    const delivery = await this.repo.retryNow(instanceId, deliveryId, this.clock.now().getTime());
    if (!delivery) throw notFound('delivery not found');
    this.onRetry(delivery);
    return { status: delivery.status };
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
