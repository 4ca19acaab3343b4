import { createRequire } from 'node:module';
import type Stripe from 'stripe';
import { DomainError } from '../../domain/errors.js';
import { paymentRequired } from '../../domain/instance/billing.js';
import type { Document, DocumentStore } from '../../infra/docstore/port.js';
import type { BillingProvider, PaymentMethod, StartedSubscription } from '../provider.js';

export interface StripeSettings {
  secretKey: string;
  priceId: string;
  /** Where the API answers (tests); Stripe's own otherwise. */
  apiBase?: string;
}

/** Which Stripe customer pays for an account: an external id, kept beside the read models. */
const BILLING_CUSTOMERS = 'billing_customers';
interface CustomerDoc extends Document {
  _id: string;
  customer_id: string;
}

/** Required when billing is on Stripe: its client is modules a start without billing need not load. */
const loadStripe = () => createRequire(import.meta.url)('stripe') as typeof Stripe;

/** The official client pointed at `apiBase` when one is given. */
export function stripeClient(settings: StripeSettings): Stripe {
  const Stripe = loadStripe();
  if (!settings.apiBase) return new Stripe(settings.secretKey, { maxNetworkRetries: 2, timeout: 10_000 });
  const base = new URL(settings.apiBase);
  return new Stripe(settings.secretKey, {
    host: base.hostname,
    port: base.port || (base.protocol === 'https:' ? 443 : 80),
    protocol: base.protocol === 'http:' ? 'http' : 'https',
    maxNetworkRetries: 2,
    timeout: 10_000,
  });
}

/**
 * Stripe behind the billing port: one customer per account, one subscription per instance,
 * charged to the customer's default payment method. Stripe's failures become upstream_failed
 * (a card refused: payment_required); its messages and the key never reach a client or a log.
 */
export class StripeProvider implements BillingProvider {
  readonly kind = 'stripe';
  readonly renewsItself = false;

  constructor(
    private readonly stripe: Stripe,
    private readonly docs: DocumentStore,
    private readonly priceId: string,
  ) {}

  async paymentMethod(accountId: string): Promise<PaymentMethod | null> {
    const method = await this.call(async () => this.defaultMethod(await this.customerOf(accountId)));
    return method && method.card ? { brand: method.card.brand, last4: method.card.last4 } : null;
  }

  async subscribe(input: { accountId: string; instanceId: string; idempotencyKey: string }): Promise<StartedSubscription> {
    const subscription = await this.call(async () => {
      const customer = await this.customerOf(input.accountId);
      const method = await this.defaultMethod(customer);
      if (!method) throw paymentRequired('the account has no payment method; add one before subscribing');
      return this.stripe.subscriptions.create(
        {
          customer,
          items: [{ price: this.priceId }],
          default_payment_method: method.id,
          // A first payment that fails refuses the subscription instead of leaving it incomplete.
          payment_behavior: 'error_if_incomplete',
          metadata: { instance_id: input.instanceId, account_id: input.accountId },
        },
        { idempotencyKey: input.idempotencyKey },
      );
    });
    const periodEnd = subscription.items.data[0]?.current_period_end;
    if (subscription.status !== 'active' || periodEnd === undefined) throw paymentRequired('the first payment did not go through');
    return { subscriptionId: subscription.id, expiredAt: new Date(periodEnd * 1000) };
  }

  async scheduleCancellation(subscriptionId: string | null): Promise<void> {
    if (subscriptionId) await this.call(() => this.stripe.subscriptions.update(subscriptionId, { cancel_at_period_end: true }));
  }

  async resume(subscriptionId: string | null): Promise<void> {
    if (subscriptionId) await this.call(() => this.stripe.subscriptions.update(subscriptionId, { cancel_at_period_end: false }));
  }

  async cancelNow(subscriptionId: string | null): Promise<void> {
    if (!subscriptionId) return;
    await this.call(async () => {
      try {
        await this.stripe.subscriptions.cancel(subscriptionId);
      } catch (err) {
        // Already gone at Stripe: what the caller wants already holds.
        if (!(err instanceof loadStripe().errors.StripeInvalidRequestError && err.code === 'resource_missing')) throw err;
      }
    });
  }

  /** The account's customer, created on first need; the idempotency key makes a race create one. */
  private async customerOf(accountId: string): Promise<string> {
    const customers = this.docs.collection<CustomerDoc>(BILLING_CUSTOMERS);
    const known = await customers.findOne({ _id: accountId });
    if (known) return known.customer_id;
    const created = await this.stripe.customers.create({ metadata: { account_id: accountId } }, { idempotencyKey: `customer:${accountId}` });
    await customers.updateOne({ _id: accountId }, { $setOnInsert: { customer_id: created.id } }, { upsert: true });
    return ((await customers.findOne({ _id: accountId })) ?? { customer_id: created.id }).customer_id;
  }

  private async defaultMethod(customerId: string): Promise<Stripe.PaymentMethod | null> {
    const customer = await this.stripe.customers.retrieve(customerId, { expand: ['invoice_settings.default_payment_method'] });
    if (customer.deleted) return null;
    const method = customer.invoice_settings.default_payment_method;
    return method && typeof method !== 'string' ? method : null;
  }

  private async call<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      if (err instanceof DomainError) throw err;
      if (err instanceof loadStripe().errors.StripeCardError) throw paymentRequired('the payment method was declined');
      throw new DomainError('upstream_failed', 'the billing provider did not answer as expected; retry');
    }
  }
}
