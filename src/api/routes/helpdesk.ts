import { notFound } from '../../domain/errors.js';
import type { HelpdeskCommands } from '../../commands/helpdesk.js';
import type { HelpdeskQueries } from '../../projections/helpdesk/helpdesk-queries.js';
import type { ImportProgress } from '../../helpdesk/bridge/bridge.js';
import type { HelpdeskDoc } from '../../projections/helpdesk/helpdesk-projection.js';
import { commandContext } from '../deps.js';
import { webhookUrl } from '../inputs.js';
import { presentHelpdesk } from '../presenters/helpdesk.js';
import { defineRoute } from '../route.js';
import { InstanceIdParams } from '../schemas/common.js';
import { HelpdeskConfiguration, SaveHelpdeskBody } from '../schemas/helpdesk.js';

const TAG = 'Helpdesk';

export interface HelpdeskRouteDeps {
  commands: HelpdeskCommands;
  queries: HelpdeskQueries;
  imports: { importProgress(instanceId: string): Promise<ImportProgress | null> };
  allowPrivate: boolean;
}

/** The spec's `<helpdesk>` segment is `helpdesk` (CONTRACT.md, Helpdesk). */
export function helpdeskRoutes({ commands, queries, imports, allowPrivate }: HelpdeskRouteDeps) {
  const present = async (doc: HelpdeskDoc) =>
    presentHelpdesk(doc, commands.callbackUrl(doc._id, doc.callback_generation), await imports.importProgress(doc._id));
  const current = async (instanceId: string) => {
    const doc = await queries.byInstance(instanceId);
    if (!doc) throw notFound('no helpdesk configuration for this instance');
    return doc;
  };
  return [
    defineRoute({
      method: 'post',
      path: '/instances/{id}/helpdesk',
      tag: TAG,
      summary: 'Save the helpdesk (Chatwoot-compatible) configuration; the callback URL is pushed to its inbox',
      auth: 'instance_jwt',
      paidOnly: true,
      params: InstanceIdParams,
      body: SaveHelpdeskBody,
      response: { description: 'configuration saved', schema: HelpdeskConfiguration },
      errors: [409, 502],
      handler: async ({ body, instance, principal, requestId }) => {
        const url = webhookUrl('url', body.url, allowPrivate) as string;
        await commands.save(
          instance._id,
          {
            enabled: body.enabled,
            // The spec's base address has no trailing slash; one typed by habit is not an error.
            url: url.replace(/\/+$/, ''),
            account_id: body.account_id,
            name_inbox: body.name_inbox,
            ...(body.token === undefined ? {} : { token: body.token }),
            sign_msg: body.sign_msg ?? false,
            sign_delimiter: body.sign_delimiter ?? '\n',
            number: body.number ?? '',
            reopen_conversation: body.reopen_conversation ?? false,
            conversation_pending: body.conversation_pending ?? false,
            import_contacts: body.import_contacts ?? false,
            import_messages: body.import_messages ?? false,
            days_limit_import_messages: body.days_limit_import_messages ?? 3,
            auto_create: body.auto_create ?? false,
            organization: body.organization ?? '',
            logo: body.logo ?? '',
            ignore_jids: body.ignore_jids ?? [],
            ignore_groups: body.ignore_groups ?? false,
          },
          commandContext(principal, requestId, instance._id),
        );
        return { body: await present(await current(instance._id)) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/instances/{id}/helpdesk',
      tag: TAG,
      summary: 'The helpdesk configuration, with the token masked',
      auth: 'instance_jwt',
      params: InstanceIdParams,
      response: { description: 'the configuration', schema: HelpdeskConfiguration },
      handler: async ({ instance }) => ({ body: await present(await current(instance._id)) }),
    }),
    defineRoute({
      method: 'delete',
      path: '/instances/{id}/helpdesk',
      tag: TAG,
      summary: 'Remove the helpdesk configuration; its callback URL stops working',
      auth: 'instance_jwt',
      paidOnly: true,
      params: InstanceIdParams,
      response: { description: 'removed', status: 204 },
      handler: async ({ instance, principal, requestId }) => {
        await commands.remove(instance._id, commandContext(principal, requestId, instance._id));
        return { status: 204, body: null };
      },
    }),
  ];
}
