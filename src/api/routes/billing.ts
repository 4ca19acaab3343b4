import type { BillingProvider } from '../../billing/provider.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { AccountBilling, Received } from '../schemas/billing.js';

const TAG = 'Billing';

export interface BillingRouteDeps {
  provider: BillingProvider;
  /** Present with the `stripe` provider. */
  stripeWebhook: { receive(rawBody: string | undefined, signature: string | undefined): Promise<void> } | null;
}

/** The account's side of billing; the instance's side (subscribe, cancel, resume) is in instances.ts. */
export function billingRoutes(deps: BillingRouteDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/account/billing',
      tag: TAG,
      summary: 'The billing provider and the payment method it charges (null when none is set)',
      auth: 'jwt',
      response: { description: 'billing of the account', schema: AccountBilling },
      errors: [502],
      handler: async ({ principal }) => ({
        body: { provider: deps.provider.kind, payment_method: await deps.provider.paymentMethod(principal.accountId) },
      }),
    }),
    ...(deps.stripeWebhook ? [stripeWebhookRoute(deps.stripeWebhook)] : []),
  ];
}

function stripeWebhookRoute(webhook: NonNullable<BillingRouteDeps['stripeWebhook']>): AnyRoute {
  return defineRoute({
    method: 'post',
    path: '/billing/stripe/webhook',
    tag: TAG,
    summary: "Stripe's signed subscription and invoice events (Stripe-Signature checked, with its timestamp tolerance)",
    auth: 'public',
    rawBody: true,
    response: { description: 'received', schema: Received },
    errors: [400],
    handler: async ({ koa }) => {
      // koa-body leaves the exact text here for routes that ask for it (rawBody).
      await webhook.receive(koa.request.rawBody, koa.get('stripe-signature') || undefined);
      return { body: { received: true } };
    },
  });
}
