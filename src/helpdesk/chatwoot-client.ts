import { AxiosError, type AxiosInstance } from 'axios';
import type { Agent } from 'undici';
import { leanAxios } from '../infra/http/lean-axios.js';
import { createOutboundAgent } from '../infra/http/outbound-agent.js';
import { checkOutboundUrl } from '../infra/http/outbound-policy.js';
import { undiciAdapter } from '../infra/http/undici-axios-adapter.js';
import { HelpdeskError, type HelpdeskAccount, type HelpdeskClient, type HelpdeskInbox } from './port.js';

export interface ChatwootClientOptions {
  /** ALLOW_PRIVATE_TARGETS: http and loopback allowed (development, tests). */
  allowPrivate: boolean;
  timeoutMs?: number;
}

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

  async close(): Promise<void> {
    await this.agent.close();
  }

  private async call<T>(account: HelpdeskAccount, method: 'get' | 'post' | 'patch' | 'delete', path: string, data?: unknown): Promise<T> {
    const url = `${account.url}/api/v1/accounts/${encodeURIComponent(account.accountId)}${path}`;
    const verdict = checkOutboundUrl(url, this.options.allowPrivate);
    if (!verdict.ok) throw new HelpdeskError(null, `the helpdesk URL is not allowed: ${verdict.reason}`);
    try {
      const res = await this.http.request<T>({ url, method, data, headers: { api_access_token: account.token } });
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

function requireInbox(raw: RawInbox): HelpdeskInbox {
  const inbox = inboxOf(raw);
  if (!inbox) throw new HelpdeskError(502, 'the helpdesk answered an inbox without an id or a name');
  return inbox;
}
