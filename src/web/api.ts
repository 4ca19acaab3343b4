/**
 * The gateway's API as the web app calls it: same origin, the session cookie sent by the
 * browser, the app's header on every call (the gateway's CSRF defence for cookie writes).
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

interface ErrorBody {
  error?: { type?: string; message?: string; details?: { path?: string; message?: string }[] };
}

export async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { 'x-gateway-app': '1', accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const parsed: unknown = text ? safeJson(text) : undefined;
  if (!res.ok) {
    const error = (parsed as ErrorBody | undefined)?.error;
    throw new ApiError(res.status, error?.type ?? 'http_error', describe(res.status, error));
  }
  return parsed as T;
}

/** The envelope's `data` of instance routes. */
export async function callData<T>(method: string, path: string, body?: unknown): Promise<T> {
  return (await call<{ data: T }>(method, path, body)).data;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function describe(status: number, error: ErrorBody['error']): string {
  if (!error?.message) return `The gateway answered ${status}.`;
  // The message often names the field already; details are added only when they say more.
  const fields = (error.details ?? [])
    .map((d) => [d.path, d.message].filter(Boolean).join(': '))
    .filter((text) => text !== '' && !error.message?.includes(text.split(': ').pop() ?? text));
  return fields.length ? `${error.message} (${fields.join('; ')})` : error.message;
}

export const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

export interface Account {
  account_id: string;
  email: string;
  client_token: string;
}

export interface SignedUp {
  account_id: string;
  email: string;
  client_token: string;
  client_secret: string;
}

export interface Instance {
  id: string;
  name: string;
  token?: string;
  webhook: string;
  connected: boolean;
  whatsapp_jid?: string | null;
  whatsapp_push_name?: string | null;
  billing_status: string;
  reject_calls?: boolean;
  auto_read_messages?: boolean;
  created_at: string;
  expired_at: string | null;
  cancel_at: string | null;
}

export interface InstancePage {
  page: number;
  size: number;
  total: number;
  total_pages: number;
  content: Instance[];
}

export interface SessionStatus {
  connected: boolean;
  phone?: string;
  push_name?: string;
  whatsapp_jid?: string;
  business_name?: string;
  profile_picture_url?: string;
  profile_url?: string;
  verified_name?: string;
  about?: string;
  website?: string;
}

export interface Qr {
  qr: string;
  qr_image: string;
}

export interface WebhookSettings {
  webhook: string;
  events: string;
  secret: string;
}

/** GET /instances/{id}/export. */
export interface ExportState {
  events: string;
  lag: number;
  last_published_seq: number;
  last_error: string | null;
  sinks: { sink: 'amqp' | 'nats'; connected: boolean; lag: number; last_published_seq: number; last_error: string | null; last_error_at: string | null }[];
}

/** The spec's event types, in its table's order. */
export const EVENT_TYPES = [
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

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface Delivery {
  id: string;
  event_id: string;
  type: string;
  status: DeliveryStatus;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
  next_attempt_at: string | null;
}

export interface DeliveryPage {
  page: number;
  page_size: number;
  total: number;
  total_pages: number;
  content: Delivery[];
}

/** An access token that still opens the account (GET /account/tokens); never the token itself. */
export interface AccessToken {
  id: string;
  issued_by: 'password' | 'client_credentials' | 'web_app';
  issued_at: string;
  expires_at: string;
  last_used_at: string | null;
  address: string;
  user_agent: string;
  current: boolean;
}

export const listAccessTokens = async (): Promise<AccessToken[]> => (await call<{ tokens: AccessToken[] }>('GET', '/account/tokens')).tokens;

export const revokeAccessToken = (id: string): Promise<{ id: string; revoked_at: string }> => call('POST', `/account/tokens/${encodeURIComponent(id)}/revoke`);
