import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { invalidInput, notFound, unauthorized } from '../domain/errors.js';
import { helpdeskStream, type HelpdeskReplyReceivedData } from '../domain/helpdesk/events.js';
import type { Clock } from '../infra/clock.js';
import type { EventStore, JsonObject } from '../infra/eventstore/port.js';
import { CallbackPaths } from '../helpdesk/callback-paths.js';
import type { HelpdeskDoc } from '../projections/helpdesk/helpdesk-projection.js';
import type { HelpdeskQueries } from '../projections/helpdesk/helpdesk-queries.js';

/** How far a signed callback's timestamp may be from our clock. */
const TOLERANCE_S = 300;

export interface CallbackHeaders {
  signature?: string;
  timestamp?: string;
}

export type CallbackOutcome = 'stored' | 'ignored';

type Body = {
  event?: unknown;
  id?: unknown;
  content?: unknown;
  message_type?: unknown;
  private?: unknown;
  source_id?: unknown;
  status?: unknown;
  sender?: { name?: unknown; type?: unknown };
  conversation?: { id?: unknown; status?: unknown; contact_inbox?: { source_id?: unknown }; meta?: { sender?: { identifier?: unknown; phone_number?: unknown } } };
  inbox?: { id?: unknown };
  attachments?: unknown;
};

const str = (v: unknown) => (typeof v === 'string' ? v : null);

/**
 * The helpdesk's callback: found by the hash of its secret path, its signature checked whenever
 * the inbox has a secret, and an agent's answer stored as an event (the bridge sends it from the
 * log). Anything else is answered and left alone: notes, incoming and activity messages, other
 * inboxes, and the messages the gateway itself created (their `source_id` is `WAID:...`).
 */
export class HelpdeskCallbacks {
  constructor(
    private readonly events: EventStore,
    private readonly configs: HelpdeskQueries,
    private readonly openInboxSecret: (instanceId: string, sealed: string) => string,
    private readonly clock: Clock,
  ) {}

  async receive(path: string, raw: string, headers: CallbackHeaders, requestId: string): Promise<CallbackOutcome> {
    const config = path.length > 200 ? null : await this.configs.byCallbackHash(CallbackPaths.hash(path));
    if (!config) throw notFound('no such callback');
    if (config.inbox_secret_sealed) this.verify(this.openInboxSecret(config._id, config.inbox_secret_sealed), raw, headers);
    let body: Body;
    try {
      body = JSON.parse(raw) as Body;
    } catch {
      throw invalidInput('body', 'malformed JSON');
    }
    if (typeof body !== 'object' || body === null || !config.enabled) return 'ignored';
    const conversationId = typeof body.conversation?.id === 'number' ? body.conversation.id : null;
    if (body.event === 'conversation_status_changed' && conversationId !== null && typeof body.status === 'string') {
      // Keyed by the body, not the request: the same callback sent again (a retry, a replay within
      // the signature's tolerance) is the same event; a later change has another body.
      const delivery = createHash('sha256').update(raw).digest('hex');
      await this.append(config, `status:${conversationId}:${delivery}`, 'HelpdeskConversationStatusChanged', { conversation_id: conversationId, status: body.status }, requestId);
      return 'stored';
    }
    const reply = this.replyOf(config, body, conversationId);
    if (!reply) return 'ignored';
    // One event per helpdesk message, whatever number of times the helpdesk calls back with it.
    await this.append(config, `reply:${reply.helpdesk_message_id}`, 'HelpdeskReplyReceived', reply, requestId);
    return 'stored';
  }

  private replyOf(config: HelpdeskDoc, body: Body, conversationId: number | null): HelpdeskReplyReceivedData | null {
    if (body.event !== 'message_created' || body.message_type !== 'outgoing' || body.private === true) return null;
    if (typeof body.id !== 'number' || conversationId === null) return null;
    if (config.inbox_id === null || body.inbox?.id !== config.inbox_id) return null;
    if (str(body.source_id)?.startsWith('WAID:')) return null;
    // Anything in the list that is not an attachment object (null, a number) is skipped, not dereferenced.
    const attachments = (Array.isArray(body.attachments) ? (body.attachments as unknown[]) : []).flatMap((a) => {
      const { file_type, data_url } = typeof a === 'object' && a !== null ? (a as { file_type?: unknown; data_url?: unknown }) : {};
      return typeof data_url === 'string' ? [{ file_type: str(file_type) ?? 'file', data_url }] : [];
    });
    const content = str(body.content) ?? '';
    if (content === '' && attachments.length === 0) return null;
    return {
      helpdesk_message_id: body.id,
      conversation_id: conversationId,
      contact_source_id: str(body.conversation?.contact_inbox?.source_id) ?? '',
      content: content.slice(0, 65_536),
      agent: (str(body.sender?.name) ?? '').slice(0, 255),
      attachments: attachments.slice(0, 15),
      contact: { identifier: str(body.conversation?.meta?.sender?.identifier), phone_number: str(body.conversation?.meta?.sender?.phone_number) },
    };
  }

  private verify(secret: string, raw: string, headers: CallbackHeaders): void {
    const { signature, timestamp } = headers;
    if (!signature || !timestamp || !/^\d{1,12}$/.test(timestamp)) throw unauthorized('the callback must be signed (X-Chatwoot-Signature, X-Chatwoot-Timestamp)');
    if (Math.abs(this.clock.now().getTime() / 1000 - Number(timestamp)) > TOLERANCE_S) throw unauthorized('the callback signature is too old');
    const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(`${timestamp}.${raw}`).digest('hex')}`);
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw unauthorized('the callback signature does not match');
  }

  private async append(config: HelpdeskDoc, key: string, type: string, data: JsonObject, requestId: string): Promise<void> {
    await this.events.append(
        helpdeskStream(config._id),
        [
          {
            id: uuidFrom(`${config._id}:${key}`),
            type,
            data,
            metadata: {
              instanceId: config._id,
              occurredAt: this.clock.now().toISOString(),
              correlationId: requestId,
              actor: { kind: 'helpdesk', id: String(config.inbox_id ?? '') },
            },
          },
        ],
        'any',
      );
  }
}

/** A UUID (version 8, RFC 9562) fixed by `key`: the same callback twice is the same event. */
function uuidFrom(key: string): string {
  const b = createHash('sha256').update(key).digest().subarray(0, 16);
  b[6] = ((b[6] as number) & 0x0f) | 0x80;
  b[8] = ((b[8] as number) & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
