import type { OpenApiExtras } from './openapi.js';
import { WebhookBodies, type WebhookType } from '../webhooks/bodies/schemas.js';

const SUMMARIES: Record<WebhookType, string> = {
  Message: 'An incoming or outgoing message (sent through the API or from the phone), with its media fields',
  ReadReceipt: 'Messages delivered to or read by the recipient (Delivered, Read), or read on the account itself (ReadSelf)',
  Connected: 'The session is paired and connected',
  Disconnected: 'The session disconnected, or the device was unlinked (LoggedOut)',
  Presence: 'A contact came online or went offline',
  ChatPresence: 'Someone is typing or recording in a chat, or stopped',
  HistorySync: 'A batch of history sync: the synced conversations and the progress',
  GroupParticipantsAdd: 'Participants were added to a group',
  GroupParticipantsRemove: 'Participants were removed from a group',
};

const SIGNING =
  'Signed in the Standard Webhooks form: headers webhook-id (the body id), webhook-timestamp (unix seconds) and ' +
  'webhook-signature `v1,<base64 HMAC-SHA256(key, id.timestamp.body)>`, key = base64-decoded part of the instance secret after `whsec_`. ' +
  'Any 2xx within 10 s acknowledges; otherwise retried with exponential backoff and jitter; 4xx other than 408, 425 and 429 is final. ' +
  'At least once: deduplicate on id. Several deliveries of one instance may be in flight together ' +
  '(WEBHOOK_CONCURRENCY_PER_INSTANCE, default 8) and arrive in any order: order by seq, which increases strictly per instance.';

/** The `webhooks` section of the OpenAPI document: every body a receiver can get. */
export function webhookOpenApi(): OpenApiExtras {
  const webhooks: NonNullable<OpenApiExtras['webhooks']> = {};
  for (const [type, schema] of Object.entries(WebhookBodies) as [WebhookType, (typeof WebhookBodies)[WebhookType]][]) {
    // Spread, so the shared schema object is not changed; the document only needs its JSON.
    webhooks[type] = { summary: SUMMARIES[type], schema: { ...schema, description: SIGNING } };
  }
  return { webhooks };
}
