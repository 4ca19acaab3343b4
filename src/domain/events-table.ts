import { Type } from '@sinclair/typebox';

/** The webhook event names of the spec's Events table, exactly. */
export const WEBHOOK_EVENT_NAMES = [
  'All',
  'Connected',
  'Disconnected',
  'Message',
  'ReadReceipt',
  'Presence',
  'HistorySync',
  'ChatPresence',
  'GroupParticipantsAdd',
  'GroupParticipantsRemove',
] as const;

export type WebhookEventName = (typeof WEBHOOK_EVENT_NAMES)[number];

export const WebhookEventNameSchema = Type.Union(WEBHOOK_EVENT_NAMES.map((n) => Type.Literal(n)));

function isWebhookEventName(name: string): name is WebhookEventName {
  return (WEBHOOK_EVENT_NAMES as readonly string[]).includes(name);
}

/**
 * Parses the comma-separated form (no spaces, names exactly from the table).
 * Returns the names, or the first offending token.
 */
export function parseEventList(list: string): { ok: true; names: WebhookEventName[] } | { ok: false; bad: string } {
  if (list === '') return { ok: true, names: [] };
  const names: WebhookEventName[] = [];
  for (const token of list.split(',')) {
    if (!isWebhookEventName(token)) return { ok: false, bad: token };
    if (!names.includes(token)) names.push(token);
  }
  return { ok: true, names };
}
