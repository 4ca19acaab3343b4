import { notFound } from '../../domain/errors.js';
import type { InstanceDoc } from '../../projections/instances/instances-projection.js';
import { commandContext, type ApiDeps } from '../deps.js';
import { eventNames, webhookUrl } from '../inputs.js';
import { presentInstance } from '../presenters/instance.js';
import { defineRoute } from '../route.js';
import { InstanceIdParams } from '../schemas/common.js';
import {
  CreateInstanceBody,
  Instance,
  InstancePage,
  ListInstancesBody,
  TokenAnswer,
  UpdateInstanceBody,
} from '../schemas/instance.js';

const TAG = 'Instances';

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
      tag: TAG,
      summary: 'Cancel the instance (PUT and DELETE do the same)',
      auth: 'instance_jwt',
      params: InstanceIdParams,
      response: { description: 'the canceled instance', schema: Instance },
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
    cancel('put'),
    cancel('delete'),
  ];
}

