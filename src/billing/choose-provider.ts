import type Stripe from 'stripe';
import { ConfigError, type Config } from '../infra/config/config.js';
import type { DocumentStore } from '../infra/docstore/port.js';
import { noneProvider } from './none-provider.js';
import type { BillingProvider } from './provider.js';
import { stripeClient, StripeProvider } from './stripe/stripe-provider.js';

export interface BillingChoice {
  provider: BillingProvider;
  /** With `stripe`: the client and the webhook's signing secret. */
  stripe: { client: Stripe; webhookSecret: string } | null;
}

/** Fails at start, before any backend opens, when `stripe` lacks a setting. */
export function checkBillingConfig(config: Config): { secretKey: string; priceId: string; webhookSecret: string } | null {
  if (config.BILLING_PROVIDER === 'none') return null;
  const { STRIPE_SECRET_KEY: secretKey, STRIPE_PRICE_ID: priceId, STRIPE_WEBHOOK_SECRET: webhookSecret } = config;
  if (!secretKey || !priceId || !webhookSecret) {
    throw new ConfigError('BILLING_PROVIDER=stripe needs STRIPE_SECRET_KEY, STRIPE_PRICE_ID and STRIPE_WEBHOOK_SECRET');
  }
  return { secretKey, priceId, webhookSecret };
}

/** BILLING_PROVIDER: `none` by default; `stripe` needs its key, price and webhook secret. */
export function chooseBillingProvider(config: Config, docs: DocumentStore): BillingChoice {
  const settings = checkBillingConfig(config);
  if (settings === null) return { provider: noneProvider, stripe: null };
  const { secretKey, priceId, webhookSecret } = settings;
  const client = stripeClient(config.STRIPE_API_BASE ? { secretKey, priceId, apiBase: config.STRIPE_API_BASE } : { secretKey, priceId });
  return { provider: new StripeProvider(client, docs, priceId), stripe: { client, webhookSecret } };
}
