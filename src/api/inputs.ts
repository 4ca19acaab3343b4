import { invalidInput } from '../domain/errors.js';
import { parseEventList, type WebhookEventName } from '../domain/events-table.js';
import { checkOutboundUrl } from '../infra/http/outbound-policy.js';

/** Parses a comma-separated event list, naming `field` when a name is not in the Events table. */
export function eventNames(field: string, list: string | undefined): WebhookEventName[] | undefined {
  if (list === undefined) return undefined;
  const parsed = parseEventList(list);
  if (!parsed.ok) throw invalidInput(field, `unknown event name '${parsed.bad}'`);
  return parsed.names;
}

/** A webhook URL must pass the outbound policy; '' (clear) always passes. */
export function webhookUrl(field: string, url: string | undefined, allowPrivate: boolean): string | undefined {
  if (url === undefined || url === '') return url;
  const verdict = checkOutboundUrl(url, allowPrivate);
  if (!verdict.ok) throw invalidInput(field, verdict.reason);
  return url;
}
