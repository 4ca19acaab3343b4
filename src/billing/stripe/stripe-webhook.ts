import type Stripe from 'stripe';
import { DomainError, invalidInput } from '../../domain/errors.js';
import type { BillingCommand } from '../../domain/instance/billing.js';
import type { Clock } from '../../infra/clock.js';
import type { SeenStripeEvents } from './seen-events.js';

/** How long a signed event stays acceptable, in seconds: Stripe's own default. */
const TOLERANCE_S = 300;

export type ProviderReport = Extract<BillingCommand, { type: 'RecordRenewal' | 'RecordPaymentFailure' | 'EndSubscription' | 'RecordCancelAtPeriodEnd' }>;

const iso = (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString();

/**
 * The instance id an event's metadata names, when it can be one of ours (the path's bound): a
 * longer one names no instance of this gateway and must never reach a store's key.
 */
const instanceIdOf = (value: unknown): string | null => (typeof value === 'string' && value.length >= 1 && value.length <= 64 ? value : null);

/** Stripe's subscription and invoice events as our commands; null for what billing ignores. */
function translate(event: Stripe.Event, graceMs: number): { instanceId: string; report: ProviderReport } | null {
  switch (event.type) {
    case 'invoice.paid': {
      const invoice = event.data.object;
      const instanceId = instanceIdOf(invoice.parent?.subscription_details?.metadata?.instance_id);
      const line = invoice.lines.data[0];
      if (!instanceId || !line) return null;
      return { instanceId, report: { type: 'RecordRenewal', data: { expired_at: iso(line.period.end) } } };
    }
    case 'invoice.payment_failed': {
      const instanceId = instanceIdOf(event.data.object.parent?.subscription_details?.metadata?.instance_id);
      if (!instanceId) return null;
      return { instanceId, report: { type: 'RecordPaymentFailure', data: { grace_ends_at: new Date(event.created * 1000 + graceMs).toISOString() } } };
    }
    case 'customer.subscription.updated': {
      // A cancellation scheduled or taken back elsewhere (Stripe's customer portal, the dashboard).
      const subscription = event.data.object;
      const instanceId = instanceIdOf(subscription.metadata.instance_id);
      if (!instanceId || typeof subscription.cancel_at_period_end !== 'boolean') return null;
      return { instanceId, report: { type: 'RecordCancelAtPeriodEnd', data: { cancel_at_period_end: subscription.cancel_at_period_end } } };
    }
    case 'customer.subscription.deleted': {
      const subscription = event.data.object;
      const instanceId = instanceIdOf(subscription.metadata.instance_id);
      if (!instanceId) return null;
      return { instanceId, report: { type: 'EndSubscription', data: { at: iso(subscription.ended_at ?? event.created) } } };
    }
    default:
      return null;
  }
}

/**
 * Receives Stripe's webhook: the signature and its timestamp are checked against the raw body
 * before anything is read from it; an unsigned, forged or stale call is 400 and changes nothing.
 */
export class StripeWebhook {
  constructor(
    private readonly stripe: Stripe,
    private readonly secret: string,
    private readonly clock: Clock,
    private readonly graceMs: number,
    private readonly record: (instanceId: string, report: ProviderReport) => Promise<void>,
    private readonly seen: SeenStripeEvents,
  ) {}

  async receive(rawBody: string | undefined, signature: string | undefined): Promise<void> {
    if (!signature) throw invalidInput('stripe-signature', 'the Stripe-Signature header is required');
    if (rawBody === undefined) throw invalidInput('body', 'send the event as application/json');
    // Stripe's library only refuses signatures too old; one from the future is as suspect.
    const signedAt = /(?:^|,)\s*t=(\d{1,12})(?:,|$)/.exec(signature);
    if (signedAt && Number(signedAt[1]) - this.clock.now().getTime() / 1000 > TOLERANCE_S) {
      throw invalidInput('stripe-signature', 'the signature\'s timestamp is in the future, past the tolerance');
    }
    let event: Stripe.Event;
    try {
      // The age is measured on our clock (milliseconds, as the client takes it).
      event = this.stripe.webhooks.constructEvent(rawBody, signature, this.secret, TOLERANCE_S, undefined, this.clock.now().getTime());
    } catch {
      throw invalidInput('stripe-signature', 'the signature does not match the body, or its timestamp is outside the tolerance');
    }
    let translated: ReturnType<typeof translate>;
    try {
      translated = translate(event, this.graceMs);
    } catch {
      // Signed, yet not the shape the API reference gives: refused, so Stripe shows it as failed.
      throw invalidInput('body', 'the event does not have the fields its type should have');
    }
    if (!translated) return;
    const { instanceId, report } = translated;
    // Each event once: a replay within the tolerance, after later changes, must not undo them.
    await this.seen.once(String(event.id), async () => {
      try {
        await this.record(instanceId, report);
      } catch (err) {
        // An instance this gateway does not know: acknowledged, so Stripe stops retrying it.
        if (!(err instanceof DomainError && err.type === 'not_found')) throw err;
      }
    });
  }
}
