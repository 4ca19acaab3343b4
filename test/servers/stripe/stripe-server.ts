import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseForm, type FormValue } from './form.js';

/**
 * A Stripe test server: the few API endpoints the gateway's adapter calls (customers, their
 * default payment method, subscriptions, cancel at period end, cancel) and Stripe's webhook
 * signing (`Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<payload>")>`), written
 * from Stripe's public API reference. Tests drive what Stripe would do on its own (a card added,
 * a renewal paid or failed, a period ending) through its methods.
 */
export interface StripeServerOptions {
  secretKey: string;
  priceId: string;
  webhookSecret: string;
  /** Length of a subscription period. */
  periodSeconds: number;
}

interface Card {
  id: string;
  brand: string;
  last4: string;
  declines: boolean;
}
interface Customer {
  id: string;
  metadata: Record<string, string>;
  defaultPaymentMethod: string | null;
}
interface Subscription {
  id: string;
  customer: string;
  status: 'active' | 'past_due' | 'canceled';
  cancel_at_period_end: boolean;
  metadata: Record<string, string>;
  periodStart: number;
  periodEnd: number;
  ended_at: number | null;
  defaultPaymentMethod: string;
}

export interface Requested {
  method: string;
  path: string;
  authorization: string;
  body: string;
}

const nowS = () => Math.floor(Date.now() / 1000);
const newId = (prefix: string) => `${prefix}_${randomBytes(8).toString('hex')}`;

export class StripeServer {
  url = '';
  /** Where events are sent, signed; set by the test once the gateway listens. */
  webhookUrl = '';
  readonly requests: Requested[] = [];
  readonly customers = new Map<string, Customer>();
  readonly subscriptions = new Map<string, Subscription>();
  private readonly cards = new Map<string, Card>();
  private readonly idempotent = new Map<string, { status: number; body: unknown }>();
  private server: Server | null = null;

  constructor(private readonly options: StripeServerOptions) {}

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  // ---- what the test makes Stripe do ----

  customerOfAccount(accountId: string): Customer | undefined {
    return [...this.customers.values()].find((c) => c.metadata.account_id === accountId);
  }

  subscriptionOfInstance(instanceId: string): Subscription | undefined {
    return [...this.subscriptions.values()].filter((s) => s.metadata.instance_id === instanceId).at(-1);
  }

  /** The customer saves a card as their default (Stripe Checkout or the portal would). */
  addCard(accountId: string, card: { brand: string; last4: string; declines?: boolean }): void {
    const customer = this.customerOfAccount(accountId);
    if (!customer) throw new Error(`no customer for ${accountId}`);
    const id = newId('pm');
    this.cards.set(id, { id, brand: card.brand, last4: card.last4, declines: card.declines ?? false });
    customer.defaultPaymentMethod = id;
  }

  /** A period ends and Stripe charges the next one: invoice.paid, or invoice.payment_failed. */
  async renew(subscriptionId: string, paid: boolean): Promise<number> {
    const sub = this.subscriptions.get(subscriptionId)!;
    const period = { start: sub.periodEnd, end: sub.periodEnd + this.options.periodSeconds };
    if (paid) {
      sub.periodStart = period.start;
      sub.periodEnd = period.end;
      sub.status = 'active';
    } else sub.status = 'past_due';
    const invoice = this.invoice(sub, period, paid);
    return this.send(paid ? 'invoice.paid' : 'invoice.payment_failed', invoice);
  }

  /** The customer cancels, or takes it back, in Stripe's portal: customer.subscription.updated. */
  async setCancelAtPeriodEnd(subscriptionId: string, cancel: boolean): Promise<number> {
    const sub = this.subscriptions.get(subscriptionId)!;
    sub.cancel_at_period_end = cancel;
    return this.send('customer.subscription.updated', this.present(sub));
  }

  /** The period ends with cancel_at_period_end set: the subscription is deleted. */
  async endPeriod(subscriptionId: string): Promise<number> {
    const sub = this.subscriptions.get(subscriptionId)!;
    sub.status = 'canceled';
    sub.ended_at = sub.periodEnd;
    return this.send('customer.subscription.deleted', this.present(sub));
  }

  /** An event as Stripe builds it. */
  event(type: string, object: unknown, created = nowS()) {
    return { id: newId('evt'), object: 'event', api_version: '2026-10-28.endive', created, type, livemode: false, pending_webhooks: 1, request: { id: null, idempotency_key: null }, data: { object } };
  }

  /** Stripe's signature header for a payload. */
  sign(payload: string, timestamp = nowS(), secret = this.options.webhookSecret): string {
    const v1 = createHmac('sha256', secret).update(`${timestamp}.${payload}`).digest('hex');
    return `t=${timestamp},v1=${v1}`;
  }

  /** Posts a signed event to the webhook; answers the receiver's status. */
  async send(type: string, object: unknown): Promise<number> {
    const payload = JSON.stringify(this.event(type, object), null, 2);
    return this.post(payload, this.sign(payload));
  }

  async post(payload: string, signature: string | null): Promise<number> {
    const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8' };
    if (signature !== null) headers['stripe-signature'] = signature;
    const res = await fetch(this.webhookUrl, { method: 'POST', headers, body: payload });
    await res.text();
    return res.status;
  }

  invoice(sub: Subscription, period: { start: number; end: number }, paid: boolean) {
    return {
      id: newId('in'),
      object: 'invoice',
      customer: sub.customer,
      status: paid ? 'paid' : 'open',
      billing_reason: 'subscription_cycle',
      parent: { type: 'subscription_details', quote_details: null, subscription_details: { subscription: sub.id, metadata: { ...sub.metadata } } },
      lines: { object: 'list', has_more: false, data: [{ id: newId('il'), object: 'line_item', period }] },
    };
  }

  // ---- the API ----

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', this.url);
    const method = req.method ?? 'GET';
    this.requests.push({ method, path: url.pathname, authorization: req.headers.authorization ?? '', body });
    const answer = (status: number, payload: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json', 'request-id': newId('req') });
      res.end(JSON.stringify(payload));
    };
    if (req.headers.authorization !== `Bearer ${this.options.secretKey}`) {
      return answer(401, { error: { type: 'invalid_request_error', message: 'Invalid API Key provided' } });
    }
    const key = req.headers['idempotency-key'];
    const remembered = typeof key === 'string' ? this.idempotent.get(`${method} ${url.pathname} ${key}`) : undefined;
    if (remembered) return answer(remembered.status, remembered.body);
    const params = method === 'GET' ? parseForm(url.searchParams.toString()) : parseForm(body);
    const [status, payload] = this.route(method, url.pathname, params);
    if (typeof key === 'string' && method === 'POST') this.idempotent.set(`${method} ${url.pathname} ${key}`, { status, body: payload });
    answer(status, payload);
  }

  private route(method: string, path: string, params: Record<string, FormValue>): [number, unknown] {
    const missing = (what: string) => [404, { error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such ${what}` } }] as [number, unknown];
    let m: RegExpMatchArray | null;
    if (method === 'POST' && path === '/v1/customers') {
      const customer: Customer = { id: newId('cus'), metadata: strings(params.metadata), defaultPaymentMethod: null };
      this.customers.set(customer.id, customer);
      return [200, this.presentCustomer(customer, [])];
    }
    if (method === 'GET' && (m = path.match(/^\/v1\/customers\/([\w]+)$/))) {
      const customer = this.customers.get(m[1] as string);
      return customer ? [200, this.presentCustomer(customer, list(params.expand))] : missing('customer');
    }
    if (method === 'POST' && path === '/v1/subscriptions') return this.createSubscription(params);
    if ((m = path.match(/^\/v1\/subscriptions\/([\w]+)$/))) {
      const sub = this.subscriptions.get(m[1] as string);
      if (!sub || sub.status === 'canceled') return missing('subscription');
      if (method === 'POST') {
        if (params.cancel_at_period_end !== undefined) sub.cancel_at_period_end = params.cancel_at_period_end === 'true';
        return [200, this.present(sub)];
      }
      if (method === 'DELETE') {
        sub.status = 'canceled';
        sub.ended_at = nowS();
        return [200, this.present(sub)];
      }
    }
    return [404, { error: { type: 'invalid_request_error', message: `Unrecognized request URL (${method}: ${path})` } }];
  }

  private createSubscription(params: Record<string, FormValue>): [number, unknown] {
    const customer = this.customers.get(String(params.customer));
    const items = list(params.items) as unknown as { price?: string }[];
    if (!customer) return [400, { error: { type: 'invalid_request_error', param: 'customer', message: 'No such customer' } }];
    if (items.length !== 1 || items[0]?.price !== this.options.priceId) {
      return [400, { error: { type: 'invalid_request_error', param: 'items', message: 'No such price' } }];
    }
    const card = this.cards.get(String(params.default_payment_method));
    if (!card || customer.defaultPaymentMethod !== card.id) {
      return [400, { error: { type: 'invalid_request_error', param: 'default_payment_method', message: 'No such PaymentMethod' } }];
    }
    if (card.declines) return [402, { error: { type: 'card_error', code: 'card_declined', message: 'Your card was declined.' } }];
    const start = nowS();
    const sub: Subscription = {
      id: newId('sub'),
      customer: customer.id,
      status: 'active',
      cancel_at_period_end: false,
      metadata: strings(params.metadata),
      periodStart: start,
      periodEnd: start + this.options.periodSeconds,
      ended_at: null,
      defaultPaymentMethod: card.id,
    };
    this.subscriptions.set(sub.id, sub);
    return [200, this.present(sub)];
  }

  private presentCustomer(customer: Customer, expand: FormValue[]) {
    const id = customer.defaultPaymentMethod;
    const card = id ? this.cards.get(id) : undefined;
    const expanded = expand.includes('invoice_settings.default_payment_method') && card
      ? { id: card.id, object: 'payment_method', type: 'card', customer: customer.id, card: { brand: card.brand, last4: card.last4, exp_month: 12, exp_year: 2030 } }
      : id;
    return { id: customer.id, object: 'customer', metadata: customer.metadata, invoice_settings: { default_payment_method: expanded ?? null } };
  }

  present(sub: Subscription) {
    return {
      id: sub.id,
      object: 'subscription',
      customer: sub.customer,
      status: sub.status,
      cancel_at_period_end: sub.cancel_at_period_end,
      ended_at: sub.ended_at,
      default_payment_method: sub.defaultPaymentMethod,
      metadata: sub.metadata,
      items: {
        object: 'list',
        has_more: false,
        data: [{ id: `si_${sub.id.slice(4)}`, object: 'subscription_item', price: { id: this.options.priceId }, current_period_start: sub.periodStart, current_period_end: sub.periodEnd }],
      },
    };
  }
}

function strings(value: FormValue | undefined): Record<string, string> {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return {};
  return Object.fromEntries(Object.entries(value).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

function list(value: FormValue | undefined): FormValue[] {
  if (Array.isArray(value)) return value;
  if (value && typeof value === 'object') return Object.values(value);
  return value === undefined ? [] : [value];
}
