import type { ExportCommands } from '../../commands/export.js';
import { conflict, invalidInput } from '../../domain/errors.js';
import type { ExportQueries } from '../../export/export-status.js';
import { commandContext } from '../deps.js';
import { envelope } from '../envelope.js';
import { eventNames } from '../inputs.js';
import { defineRoute } from '../route.js';
import { InstanceIdParams } from '../schemas/common.js';
import { ExportState, SetExportBody } from '../schemas/export.js';

const TAG = 'Event export';

export interface ExportRouteDeps {
  commands: ExportCommands;
  queries: ExportQueries;
  /** A broker is configured (EXPORT_AMQP_URL / EXPORT_NATS_URL). */
  enabled: boolean;
}

export function exportRoutes({ commands, queries, enabled }: ExportRouteDeps) {
  return [
    defineRoute({
      method: 'post',
      path: '/instances/{id}/export',
      tag: TAG,
      summary: "Export the instance's events of these types to the gateway's brokers (RabbitMQ, NATS JetStream)",
      auth: 'instance',
      paidOnly: true,
      params: InstanceIdParams,
      body: SetExportBody,
      response: { description: 'the export, on', schema: ExportState },
      errors: [409],
      handler: async ({ body, instance, principal, requestId }) => {
        const list = typeof body.events === 'string' ? body.events : body.events.join(',');
        const events = eventNames('events', list) ?? [];
        if (events.length === 0) throw invalidInput('events', 'name at least one event type; DELETE /instances/{id}/export stops the export');
        if (!enabled) throw conflict('event export is off on this gateway: its operator sets EXPORT_AMQP_URL and/or EXPORT_NATS_URL');
        await commands.configure(instance._id, events.includes('All') ? ['All'] : events, commandContext(principal, requestId, instance._id));
        return { body: envelope(await queries.status(instance._id)) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/instances/{id}/export',
      tag: TAG,
      summary: 'The export: its event types, how far each broker has published, the last error',
      auth: 'instance',
      params: InstanceIdParams,
      response: { description: 'the export', schema: ExportState },
      handler: async ({ instance }) => ({ body: envelope(await queries.status(instance._id)) }),
    }),
    defineRoute({
      method: 'delete',
      path: '/instances/{id}/export',
      tag: TAG,
      summary: 'Stop exporting (events recorded before are still published)',
      auth: 'instance',
      paidOnly: true,
      params: InstanceIdParams,
      response: { description: 'the export, off', schema: ExportState },
      handler: async ({ instance, principal, requestId }) => {
        await commands.clear(instance._id, commandContext(principal, requestId, instance._id));
        return { body: envelope(await queries.status(instance._id)) };
      },
    }),
  ];
}
