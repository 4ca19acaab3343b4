import { notFound } from '../../domain/errors.js';
import type { InstanceDoc } from '../../projections/instances/instances-projection.js';
import { commandContext, type ApiDeps } from '../deps.js';
import { eventNames, webhookUrl } from '../inputs.js';
import { presentInstance } from '../presenters/instance.js';
import type { InstanceStateAt } from '../../projections/instances/instance-state-at.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { InstanceIdParams } from '../schemas/common.js';
import {
  CreateInstanceBody,
  Instance,
  InstancePage,
  ListInstancesBody,
  StateAtQuery,
  TokenAnswer,
  UpdateInstanceBody,
} from '../schemas/instance.js';

const TAG = 'Instances';
const BILLING_TAG = 'Billing';

export function instanceRoutes(deps: ApiDeps) {
  const allowPrivate = deps.config.ALLOW_PRIVATE_TARGETS;
  const present = (doc: InstanceDoc, token?: string) => presentInstance(doc, deps.config.PUBLIC_URL, token);
  const reload = async (id: string) => {
    const doc = await deps.instanceQueries.byId(id);
    if (!doc) throw notFound('instance not found');
    return doc;
  };

  const cancel = (method: 'put' | 'delete') =>
    defineRoute({
      method,
      path: '/instances/{id}/cancel',
      tag: BILLING_TAG,
      summary:
        'Cancel (PUT and DELETE do the same): an ACTIVE subscription runs to the end of its period (`cancel_at`); any other instance is CANCELED at once',
      auth: 'instance_jwt',
      params: InstanceIdParams,
      response: { description: 'the instance', schema: Instance },
      errors: [409, 502],
      handler: async ({ instance, principal, requestId }) => {
        await deps.instances.cancel(instance._id, commandContext(principal, requestId, instance._id));
        return { body: present(await reload(instance._id)) };
      },
    });

  return [
    defineRoute({
      method: 'put',
      path: '/instances/create',
      idempotent: true,
      tag: TAG,
      summary: 'Create an instance; the answer carries its token, shown only here',
      auth: 'jwt',
      body: CreateInstanceBody,
      response: { description: 'instance created', schema: Instance },
      handler: async ({ body, principal, requestId }) => {
        const { instanceId, token } = await deps.instances.create(
          principal.accountId,
          {
            name: body.name,
            webhook: webhookUrl('webhook', body.webhook, allowPrivate),
            events: body.events_subscribe,
            reject_calls: body.reject_calls ?? false,
            auto_read_messages: body.auto_read_messages ?? false,
            labels: body.labels ?? {},
          },
          requestId,
        );
        return { body: present(await reload(instanceId), token) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/instances/list',
      tag: TAG,
      summary: "List the caller's instances",
      auth: 'jwt',
      body: ListInstancesBody,
      response: { description: 'a page of instances', schema: InstancePage },
      handler: async ({ body, principal }) => {
        const page = body.page ?? 1;
        const size = body.size ?? 20;
        const { total, items } = await deps.instanceQueries.list({
          accountId: principal.accountId,
          page,
          size,
          query: body.filter?.query,
          connected: body.filter?.connected,
          billingStatus: body.filter?.billing_status,
          sort: body.sort ?? 'created_at',
          sortDesc: body.sortDesc ?? true,
        });
        return { body: { page, size, total, total_pages: Math.ceil(total / size), content: items.map((d) => present(d)) } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/instances/{id}',
      tag: TAG,
      summary: 'Read an instance (without its token)',
      auth: 'instance',
      params: InstanceIdParams,
      response: { description: 'the instance', schema: Instance },
      handler: ({ instance }) => ({ body: present(instance) }),
    }),
    defineRoute({
      method: 'patch',
      path: '/instances/{id}',
      tag: TAG,
      summary: 'Update an instance',
      auth: 'instance',
      paidOnly: true,
      params: InstanceIdParams,
      body: UpdateInstanceBody,
      response: { description: 'the updated instance', schema: Instance },
      errors: [409],
      handler: async ({ body, instance, principal, requestId }) => {
        const input = {
          name: body.name,
          webhook: webhookUrl('webhook', body.webhook, allowPrivate),
          events: eventNames('events_subscribe', body.events_subscribe),
          reject_calls: body.reject_calls,
          auto_read_messages: body.auto_read_messages,
        };
        await deps.instances.update(instance._id, input, commandContext(principal, requestId, instance._id));
        return { body: present(await reload(instance._id)) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/instances/{id}/token/rotate',
      tag: TAG,
      summary: 'Issue a new instance token; the old one stops working at once',
      auth: 'instance_jwt',
      params: InstanceIdParams,
      response: { description: 'the new token', schema: TokenAnswer },
      errors: [409],
      handler: async ({ instance, principal, requestId }) => ({
        body: { token: await deps.instances.rotateToken(instance._id, commandContext(principal, requestId, instance._id)) },
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/instances/{id}/subscribe',
      tag: BILLING_TAG,
      idempotent: true,
      summary: 'Start a paid subscription (from TRIALING, PAST_DUE, EXPIRED or CANCELED): ACTIVE until `expired_at`',
      auth: 'instance_jwt',
      params: InstanceIdParams,
      response: { description: 'the ACTIVE instance', schema: Instance },
      // 402: the billing provider has no payment method for the account.
      errors: [402, 409, 502],
      handler: async ({ instance, principal, requestId }) => {
        await deps.instances.subscribe(instance._id, principal.accountId, commandContext(principal, requestId, instance._id));
        return { body: present(await reload(instance._id)) };
      },
    }),
    cancel('put'),
    cancel('delete'),
    defineRoute({
      method: 'post',
      path: '/instances/{id}/resume-subscription',
      tag: BILLING_TAG,
      summary: 'Take back a scheduled cancellation: `cancel_at` becomes null',
      auth: 'instance_jwt',
      params: InstanceIdParams,
      response: { description: 'the instance', schema: Instance },
      errors: [409, 502],
      handler: async ({ instance, principal, requestId }) => {
        await deps.instances.resume(instance._id, commandContext(principal, requestId, instance._id));
        return { body: present(await reload(instance._id)) };
      },
    }),
  ];
}

/** The Instance at a past moment, folded from the log by the read model's own fold. */
export function instanceStateRoutes(stateAt: InstanceStateAt, publicUrl: string): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/instances/{id}/history/state',
      tag: TAG,
      summary: 'The instance as `GET /instances/{id}` would have answered at `at` (never its token)',
      auth: 'instance_jwt',
      params: InstanceIdParams,
      query: StateAtQuery,
      response: { description: 'the instance at that moment', schema: Instance },
      // 404 also when the instance did not exist yet at `at`.
      errors: [404],
      handler: async ({ instance, query }) => {
        const view = await stateAt.at(instance._id, new Date(query.at));
        if (!view) throw notFound('the instance did not exist at that time');
        return { body: presentInstance({ _id: instance._id, ...view }, publicUrl) };
      },
    }),
  ];
}

