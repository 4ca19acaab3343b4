import type { DeliveryLog } from '../../webhooks/deliveries/delivery-log.js';
import { envelope } from '../envelope.js';
import { presentDelivery } from '../presenters/deliveries.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { InstanceIdParams } from '../schemas/common.js';
import { DeliveriesQuery, DeliveryPage, DeliveryParams, RetryAnswer } from '../schemas/webhook-deliveries.js';

const TAG = 'Webhooks';

/** CONTRACT.md, Webhooks: the delivery log and the manual retry. */
export function webhookDeliveryRoutes(log: DeliveryLog): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/instances/{id}/webhook/deliveries',
      tag: TAG,
      summary: 'Webhook deliveries, newest first, optionally by status',
      auth: 'instance',
      params: InstanceIdParams,
      query: DeliveriesQuery,
      response: { description: 'a page of deliveries', schema: DeliveryPage },
      handler: async ({ instance, query }) => {
        const page = query.page ?? 1;
        const pageSize = query.page_size ?? 50;
        const { total, items } = await log.page(instance._id, page, pageSize, query.status);
        // CONTRACT.md, Webhooks: the bare page, fields in its order.
        return { body: { page, page_size: pageSize, total, total_pages: Math.ceil(total / pageSize), content: items.map(presentDelivery) } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/instances/{id}/webhook/deliveries/{deliveryId}/retry',
      tag: TAG,
      summary: 'Attempt a delivery again now (a failed one, or any other), with a fresh retry horizon',
      auth: 'instance',
      params: DeliveryParams,
      response: { description: 'the delivery is pending again', schema: RetryAnswer },
      handler: async ({ instance, params }) => ({ body: envelope(await log.retry(instance._id, params.deliveryId)) }),
    }),
  ];
}
