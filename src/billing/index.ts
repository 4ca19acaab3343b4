import type { ProviderReport } from './stripe/stripe-webhook.js';
import type { RenewalRule } from '../domain/instance/billing.js';
import type { Clock } from '../infra/clock.js';
import type { Config } from '../infra/config/config.js';
import type { DocumentStore } from '../infra/docstore/port.js';
import type { Logger } from '../infra/logging/logger.js';
import { BillingTimer } from './billing-timer.js';
import { chooseBillingProvider } from './choose-provider.js';
import { DueTimesProjection } from './due-times.js';
import type { BillingProvider } from './provider.js';
import { SeenStripeEvents } from './stripe/seen-events.js';
import { StripeWebhook } from './stripe/stripe-webhook.js';

export { checkBillingConfig } from './choose-provider.js';

const DAY_MS = 86_400_000;

export interface BillingSettings {
  provider: BillingProvider;
  /** Decimals allowed: tests use seconds. */
  periodDays: number;
  graceDays: number;
}

/** How the decider's timer command and the due-time read model treat a period's end. */
export function renewalRuleOf(settings: BillingSettings): RenewalRule {
  return { renewsItself: settings.provider.renewsItself, periodMs: settings.periodDays * DAY_MS, graceMs: settings.graceDays * DAY_MS };
}

export interface BillingWiring {
  settings: BillingSettings;
  /** The due-time read model, to run with the other projections. */
  dueTimes: DueTimesProjection;
  /** Starts the timer once the commands exist; `act` appends what is due for one instance. */
  startTimer(act: (instanceId: string) => Promise<void>): void;
  /** With `stripe`: its webhook receiver, recording through `record`. */
  stripeWebhook(record: (instanceId: string, report: ProviderReport) => Promise<void>): StripeWebhook | null;
  stop(): Promise<void>;
}

/** The billing feature wired from config: provider, due times, timer, Stripe's webhook. */
export function createBilling(deps: { config: Config; docs: DocumentStore; clock: Clock; logger: Logger }): BillingWiring {
  const { config, docs, clock, logger } = deps;
  const choice = chooseBillingProvider(config, docs);
  const settings: BillingSettings = { provider: choice.provider, periodDays: config.BILLING_PERIOD_DAYS, graceDays: config.BILLING_GRACE_DAYS };
  let timer: BillingTimer | null = null;
  return {
    settings,
    dueTimes: new DueTimesProjection(renewalRuleOf(settings), () => timer?.poke()),
    startTimer(act) {
      timer = new BillingTimer(docs, act, clock, logger.child({ module: 'billing-timer' }));
      timer.start();
    },
    stripeWebhook(record) {
      if (!choice.stripe) return null;
      return new StripeWebhook(choice.stripe.client, choice.stripe.webhookSecret, clock, settings.graceDays * DAY_MS, record, new SeenStripeEvents(docs, clock));
    },
    stop: async () => timer?.stop(),
  };
}
