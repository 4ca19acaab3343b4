import type { BillingProvider } from '../../billing/provider.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { AccountBilling } from '../schemas/billing.js';

const TAG = 'Billing';

export interface BillingRouteDeps {
  provider: BillingProvider;
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
  ];
}
