/** The card (or other method) a provider charges; never more than what a client may see. */
export interface PaymentMethod {
  brand: string;
  last4: string;
}

export interface StartedSubscription {
  /** The provider's id for later changes; absent when the provider keeps none. */
  subscriptionId?: string;
  /** End of the first paid period. */
  expiredAt: Date;
}

/**
 * The billing port, owned by the billing code. `none` charges nothing and renews by itself;
 * `stripe` charges the account's customer and reports renewals through its webhook.
 */
export interface BillingProvider {
  readonly kind: 'none' | 'stripe';
  /** True when a period renews at its end without the provider saying it was paid. */
  readonly renewsItself: boolean;
  paymentMethod(accountId: string): Promise<PaymentMethod | null>;
  /** Throws payment_required when the account has nothing to charge. */
  subscribe(input: { accountId: string; instanceId: string; now: Date; periodMs: number; idempotencyKey: string }): Promise<StartedSubscription>;
  /** The subscription runs to the end of its period, then ends. */
  scheduleCancellation(subscriptionId: string | null): Promise<void>;
  resume(subscriptionId: string | null): Promise<void>;
  /** Ends the subscription at once (an unpaid one being canceled). */
  cancelNow(subscriptionId: string | null): Promise<void>;
}
