import { commandContext, type ApiDeps } from '../deps.js';
import { envelope } from '../envelope.js';
import { eventNames, webhookUrl } from '../inputs.js';
import { defineRoute } from '../route.js';
import { InstanceIdParams } from '../schemas/common.js';
import { SetWebhookBody, WebhookConfiguration, WebhookSecret, WebhookWithSecret } from '../schemas/webhook.js';

const TAG = 'Webhooks';

export function webhookRoutes(deps: ApiDeps) {
  const current = async (id: string) => {
    const doc = await deps.instanceQueries.byId(id);
    return { webhook: doc?.webhook ?? '', events: doc?.events_subscribe.join(',') ?? '' };
  };
  return [
    defineRoute({
      method: 'post',
      path: '/instances/{id}/webhook',
      tag: TAG,
      summary: 'Set (or clear, with an empty URL) the webhook and its event types',
      auth: 'instance',
      paidOnly: true,
      params: InstanceIdParams,
      body: SetWebhookBody,
      response: { description: 'webhook saved', schema: WebhookConfiguration },
      errors: [409],
      handler: async ({ body, instance, principal, requestId }) => {
        const url = webhookUrl('webhookURL', body.webhookURL, deps.config.ALLOW_PRIVATE_TARGETS) ?? '';
        const events = eventNames('events', body.events);
        await deps.instances.configureWebhook(instance._id, url, events, commandContext(principal, requestId, instance._id));
        return { body: envelope(await current(instance._id)) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/instances/{id}/webhook',
      tag: TAG,
      summary: 'The webhook configuration with its signing secret',
      auth: 'instance',
      params: InstanceIdParams,
      response: { description: 'webhook configuration', schema: WebhookWithSecret },
      handler: ({ instance }) => ({
        body: envelope({
          webhook: instance.webhook,
          events: instance.events_subscribe.join(','),
          secret: deps.instances.openWebhookSecret(instance._id, instance.webhook_secret_sealed),
        }),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/instances/{id}/webhook/secret/rotate',
      tag: TAG,
      summary: 'Issue a new signing secret; deliveries from now on are signed with it',
      auth: 'instance',
      paidOnly: true,
      params: InstanceIdParams,
      response: { description: 'the new secret', schema: WebhookSecret },
      errors: [409],
      handler: async ({ instance, principal, requestId }) => ({
        body: envelope({
          secret: await deps.instances.rotateWebhookSecret(instance._id, commandContext(principal, requestId, instance._id)),
        }),
      }),
    }),
  ];
}
