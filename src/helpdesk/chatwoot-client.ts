import { AxiosError, type AxiosInstance } from 'axios';
import type { Agent } from 'undici';
import { leanAxios } from '../infra/http/lean-axios.js';
import { createOutboundAgent } from '../infra/http/outbound-agent.js';
import { checkOutboundUrl } from '../infra/http/outbound-policy.js';
import { undiciAdapter } from '../infra/http/undici-axios-adapter.js';
import {
  HelpdeskError,
  type HelpdeskAccount,
  type HelpdeskClient,
  type HelpdeskContact,
  type HelpdeskConversation,
  type HelpdeskFile,
  type HelpdeskInbox,
  type NewHelpdeskMessage,
} from './port.js';

export interface ChatwootClientOptions {
  /** ALLOW_PRIVATE_TARGETS: http and loopback allowed (development, tests). */
  allowPrivate: boolean;
  timeoutMs?: number;
}

type RawContact = { id?: unknown; name?: unknown; phone_number?: unknown; identifier?: unknown };
type RawConversation = { id?: unknown; inbox_id?: unknown; status?: unknown; contact_inbox?: { source_id?: unknown } };

type RawInbox = { id?: unknown; name?: unknown; inbox_identifier?: unknown; webhook_url?: unknown; secret?: unknown };

/**
 * Chatwoot's REST API (`/api/v1/accounts/{account_id}`, header `api_access_token`) through axios
 * over an undici pool. Every URL passes the outbound policy before a request, and names are
 * checked again on the address dialled.
 */
export class ChatwootClient implements HelpdeskClient {
  private readonly agent: Agent;
  private readonly http: AxiosInstance;

  constructor(private readonly options: ChatwootClientOptions) {
    const timeoutMs = options.timeoutMs ?? 10_000;
    this.agent = createOutboundAgent({ allowPrivate: options.allowPrivate, timeoutMs, connectionsPerOrigin: 16 });
    this.http = leanAxios({
      adapter: undiciAdapter(this.agent),
      timeout: timeoutMs,
      maxRedirects: 0,
      responseType: 'text',
      transformRequest: [(data: unknown) => (data === undefined ? data : JSON.stringify(data))],
      transformResponse: [(text: unknown) => parseJson(text)],
      validateStatus: (s) => s >= 200 && s < 300,
      headers: { 'content-type': 'application/json', 'user-agent': 'messaging-gateway-helpdesk/1.0' },
    });
  }

  async listInboxes(account: HelpdeskAccount): Promise<HelpdeskInbox[]> {
    const body = await this.call<{ payload?: RawInbox[] }>(account, 'get', '/inboxes');
    return (Array.isArray(body.payload) ? body.payload : []).flatMap((raw) => inboxOf(raw) ?? []);
  }

  async createApiInbox(account: HelpdeskAccount, name: string, webhookUrl: string): Promise<HelpdeskInbox> {
    const raw = await this.call<RawInbox>(account, 'post', '/inboxes', { name, channel: { type: 'api', webhook_url: webhookUrl } });
    return requireInbox(raw);
  }

  async setInboxWebhook(account: HelpdeskAccount, inboxId: number, webhookUrl: string): Promise<HelpdeskInbox> {
    const raw = await this.call<RawInbox>(account, 'patch', `/inboxes/${inboxId}`, { channel: { webhook_url: webhookUrl } });
    return requireInbox(raw);
  }

  async findContacts(account: HelpdeskAccount, attribute: 'identifier' | 'phone_number', values: string[]): Promise<HelpdeskContact[]> {
    const payload = values.map((value, i) => ({
      attribute_key: attribute,
      filter_operator: 'equal_to',
      values: [value],
      query_operator: i < values.length - 1 ? 'OR' : null,
    }));
    const body = await this.call<{ payload?: RawContact[] }>(account, 'post', '/contacts/filter', { payload });
    return (Array.isArray(body.payload) ? body.payload : []).flatMap((c) => contactOf(c) ?? []);
  }

  async createContact(account: HelpdeskAccount, contact: { inbox_id: number; name: string; phone_number?: string; identifier: string }): Promise<HelpdeskContact> {
    const body = await this.call<{ payload?: { contact?: RawContact } }>(account, 'post', '/contacts', contact);
    const created = contactOf(body.payload?.contact ?? {});
    if (!created) throw new HelpdeskError(502, 'the helpdesk answered a contact without an id');
    return created;
  }

  async contactConversations(account: HelpdeskAccount, contactId: number): Promise<HelpdeskConversation[]> {
    const body = await this.call<{ payload?: RawConversation[] }>(account, 'get', `/contacts/${contactId}/conversations`);
    return (Array.isArray(body.payload) ? body.payload : []).flatMap((c) => conversationOf(c) ?? []);
  }

  async createConversation(account: HelpdeskAccount, conversation: { inbox_id: number; contact_id: number; status: 'open' | 'pending' }): Promise<HelpdeskConversation> {
    const created = conversationOf(await this.call<RawConversation>(account, 'post', '/conversations', conversation));
    if (!created) throw new HelpdeskError(502, 'the helpdesk answered a conversation without an id');
    return created;
  }

  async setConversationStatus(account: HelpdeskAccount, conversationId: number, status: 'open' | 'pending' | 'resolved'): Promise<void> {
    await this.call(account, 'post', `/conversations/${conversationId}/toggle_status`, { status });
  }

  async createMessage(account: HelpdeskAccount, conversationId: number, message: NewHelpdeskMessage): Promise<{ id: number }> {
    const path = `/conversations/${conversationId}/messages`;
    const { attachments = [], ...fields } = message;
    let body: { id?: unknown };
    if (attachments.length === 0) {
      body = await this.call(account, 'post', path, { private: false, ...fields });
    } else {
      const form = new FormData();
      form.set('content', fields.content);
      form.set('message_type', fields.message_type);
      form.set('private', String(fields.private ?? false));
      if (fields.source_id) form.set('source_id', fields.source_id);
      if (fields.content_attributes) form.set('content_attributes', JSON.stringify(fields.content_attributes));
      for (const file of attachments) form.append('attachments[]', new Blob([file.bytes], { type: file.contentType }), file.name);
      body = await this.callForm(account, path, form);
    }
    if (typeof body.id !== 'number') throw new HelpdeskError(502, 'the helpdesk answered a message without an id');
    return { id: body.id };
  }

  async messageSources(account: HelpdeskAccount, conversationId: number): Promise<{ id: number; source_id: string }[]> {
    const body = await this.call<{ payload?: { id?: unknown; source_id?: unknown }[] }>(account, 'get', `/conversations/${conversationId}/messages`);
    return (Array.isArray(body.payload) ? body.payload : []).flatMap((m) =>
      typeof m.id === 'number' && typeof m.source_id === 'string' ? [{ id: m.id, source_id: m.source_id }] : [],
    );
  }

  async deleteMessage(account: HelpdeskAccount, conversationId: number, messageId: number): Promise<void> {
    await this.call(account, 'delete', `/conversations/${conversationId}/messages/${messageId}`);
  }

  async fetchFile(url: string, maxBytes: number): Promise<HelpdeskFile> {
    const verdict = checkOutboundUrl(url, this.options.allowPrivate);
    if (!verdict.ok) throw new HelpdeskError(400, `the attachment URL is not allowed: ${verdict.reason}`);
    try {
      const res = await this.http.request<Buffer>({ url, method: 'get', responseType: 'arraybuffer', transformResponse: [(d: unknown) => d], maxContentLength: maxBytes });
      const bytes = Buffer.from(res.data);
      const contentType = String(res.headers['content-type'] ?? 'application/octet-stream').split(';')[0] as string;
      const name = decodeURIComponent(new URL(url).pathname.split('/').pop() || 'file');
      return { name, contentType, bytes };
    } catch (err) {
      throw helpdeskError(err);
    }
  }

  async markSeen(account: HelpdeskAccount, inboxIdentifier: string, contactSourceId: string, conversationId: number): Promise<void> {
    const url = `${account.url}/public/api/v1/inboxes/${encodeURIComponent(inboxIdentifier)}/contacts/${encodeURIComponent(contactSourceId)}/conversations/${conversationId}/update_last_seen`;
    await this.send(url, 'post', {}, {});
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  private call<T>(account: HelpdeskAccount, method: 'get' | 'post' | 'patch' | 'delete', path: string, data?: unknown): Promise<T> {
    return this.send<T>(this.apiUrl(account, path), method, data, { api_access_token: account.token });
  }

  /** Multipart: the body goes as the FormData's own encoding, not through the JSON transform. */
  private async callForm<T>(account: HelpdeskAccount, path: string, form: FormData): Promise<T> {
    const encoded = new Response(form);
    const bytes = Buffer.from(await encoded.arrayBuffer());
    return this.send<T>(this.apiUrl(account, path), 'post', bytes, {
      api_access_token: account.token,
      'content-type': encoded.headers.get('content-type') ?? 'multipart/form-data',
    }, [(data: unknown) => data]);
  }

  private apiUrl(account: HelpdeskAccount, path: string): string {
    return `${account.url}/api/v1/accounts/${encodeURIComponent(account.accountId)}${path}`;
  }

  private async send<T>(
    url: string,
    method: 'get' | 'post' | 'patch' | 'delete',
    data: unknown,
    headers: Record<string, string>,
    transformRequest?: ((data: unknown) => unknown)[],
  ): Promise<T> {
    const verdict = checkOutboundUrl(url, this.options.allowPrivate);
    if (!verdict.ok) throw new HelpdeskError(null, `the helpdesk URL is not allowed: ${verdict.reason}`);
    try {
      const res = await this.http.request<T>({ url, method, data, headers, ...(transformRequest ? { transformRequest } : {}) });
      return res.data;
    } catch (err) {
      throw helpdeskError(err);
    }
  }
}

function helpdeskError(err: unknown): HelpdeskError {
  if (err instanceof AxiosError && err.response) {
    const retryAfter = Number(err.response.headers['retry-after']);
    const detail = typeof err.response.data === 'object' && err.response.data !== null ? JSON.stringify(err.response.data).slice(0, 200) : '';
    return new HelpdeskError(err.response.status, `the helpdesk answered ${err.response.status} ${detail}`.trim(), Number.isFinite(retryAfter) ? retryAfter : undefined);
  }
  return new HelpdeskError(null, `the helpdesk could not be reached: ${(err as Error).message}`);
}

function parseJson(text: unknown): unknown {
  if (typeof text !== 'string' || text === '') return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return { unparsed: text.slice(0, 200) };
  }
}

function inboxOf(raw: RawInbox): HelpdeskInbox | null {
  if (typeof raw.id !== 'number' || typeof raw.name !== 'string') return null;
  return {
    id: raw.id,
    name: raw.name,
    inbox_identifier: typeof raw.inbox_identifier === 'string' ? raw.inbox_identifier : '',
    webhook_url: typeof raw.webhook_url === 'string' ? raw.webhook_url : '',
    ...(typeof raw.secret === 'string' && raw.secret ? { secret: raw.secret } : {}),
  };
}

function contactOf(raw: RawContact): HelpdeskContact | null {
  if (typeof raw.id !== 'number') return null;
  return {
    id: raw.id,
    name: typeof raw.name === 'string' ? raw.name : '',
    phone_number: typeof raw.phone_number === 'string' ? raw.phone_number : null,
    identifier: typeof raw.identifier === 'string' ? raw.identifier : null,
  };
}

const STATUSES = new Set(['open', 'pending', 'resolved', 'snoozed']);

function conversationOf(raw: RawConversation): HelpdeskConversation | null {
  if (typeof raw.id !== 'number' || typeof raw.inbox_id !== 'number') return null;
  return {
    id: raw.id,
    inbox_id: raw.inbox_id,
    status: (typeof raw.status === 'string' && STATUSES.has(raw.status) ? raw.status : 'open') as HelpdeskConversation['status'],
    contact_source_id: typeof raw.contact_inbox?.source_id === 'string' ? raw.contact_inbox.source_id : '',
  };
}

function requireInbox(raw: RawInbox): HelpdeskInbox {
  const inbox = inboxOf(raw);
  if (!inbox) throw new HelpdeskError(502, 'the helpdesk answered an inbox without an id or a name');
  return inbox;
}
