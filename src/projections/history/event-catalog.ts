import type { TSchema } from '@sinclair/typebox';
import { AccountEventSchemas } from '../../domain/account/events.js';
import { HelpdeskEventSchemas } from '../../domain/helpdesk/events.js';
import { InstanceEventSchemas } from '../../domain/instance/events.js';
import { SessionEventSchemas } from '../../domain/session/events.js';
import { WebhookDeliveryEventSchemas } from '../../domain/webhook/delivery-events.js';

/**
 * Every event type the log may hold, with its schema: what `types` filters are checked against,
 * and what the redaction test walks. A concept that adds a schema map adds it here.
 */
export const EVENT_SCHEMAS: Readonly<Record<string, TSchema>> = {
  ...AccountEventSchemas,
  ...InstanceEventSchemas,
  ...SessionEventSchemas,
  ...WebhookDeliveryEventSchemas,
  ...HelpdeskEventSchemas,
};

export const isEventType = (type: string): boolean => Object.hasOwn(EVENT_SCHEMAS, type);
