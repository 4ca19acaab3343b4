import { conflict, DomainError } from '../errors.js';
import type { InstanceEvent } from './events.js';

export const BILLING_STATUSES = ['TRIALING', 'ACTIVE', 'PAST_DUE', 'EXPIRED', 'CANCELED'] as const;
type BillingStatus = (typeof BILLING_STATUSES)[number];

/** The instance's billing as CONTRACT.md's state machine knows it. Times are ISO strings. */
export interface BillingState {
  status: BillingStatus;
  /** End of the trial or of the paid period. */
  expiredAt: string;
  cancelAt: string | null;
  /** Set while PAST_DUE. */
  graceEndsAt: string | null;
  /** The provider's subscription, when it keeps one. */
  subscriptionId: string | null;
}

/** How renewals get paid: the `none` provider always renews, `stripe` renews through its invoices. */
export interface RenewalRule {
  renewsItself: boolean;
  periodMs: number;
  graceMs: number;
}

export type BillingCommand =
  | { type: 'Subscribe'; data: { at: string; expired_at: string; provider_subscription_id?: string } }
  | { type: 'CancelInstance'; data: { at: string } }
  | { type: 'ResumeSubscription'; data: Record<string, never> }
  /** The timer: whatever is due at `at` happens; nothing when nothing is due. */
  | { type: 'ReachDueTime'; data: { at: string; rule: RenewalRule } }
  /** The provider reports a paid renewal. */
  | { type: 'RecordRenewal'; data: { expired_at: string } }
  /** The provider reports an unpaid renewal. */
  | { type: 'RecordPaymentFailure'; data: { grace_ends_at: string } }
  /** The provider ended the subscription (at period end after a cancellation, or unpaid). */
  | { type: 'EndSubscription'; data: { at: string } }
  /** The provider reports that the subscription will, or will no longer, end with its period. */
  | { type: 'RecordCancelAtPeriodEnd'; data: { cancel_at_period_end: boolean } };

export const BILLING_COMMANDS: ReadonlySet<string> = new Set([
  'Subscribe',
  'CancelInstance',
  'ResumeSubscription',
  'ReachDueTime',
  'RecordRenewal',
  'RecordPaymentFailure',
  'EndSubscription',
  'RecordCancelAtPeriodEnd',
]);

/** While EXPIRED or CANCELED an instance does not run: no session, no acting routes, no webhooks. */
export const isLapsed = (status: string): boolean => status === 'EXPIRED' || status === 'CANCELED';

export const paymentRequired = (message = 'the instance has no running subscription; subscribe to use it') =>
  new DomainError('payment_required', message);

export const NO_BILLING: BillingState = { status: 'TRIALING', expiredAt: '', cancelAt: null, graceEndsAt: null, subscriptionId: null };

/** The one fold of billing: the instance decider, the due-time projection and the webhook filter use it. */
export function evolveBilling(state: BillingState, event: InstanceEvent): BillingState {
  switch (event.type) {
    case 'InstanceCreated':
      return { ...NO_BILLING, status: event.data.billing_status, expiredAt: event.data.expired_at };
    case 'SubscriptionStarted':
      return {
        status: 'ACTIVE',
        expiredAt: event.data.expired_at,
        cancelAt: null,
        graceEndsAt: null,
        subscriptionId: event.data.provider_subscription_id ?? null,
      };
    case 'SubscriptionRenewed':
      return { ...state, status: 'ACTIVE', expiredAt: event.data.expired_at, graceEndsAt: null };
    case 'SubscriptionCancellationScheduled':
      return { ...state, cancelAt: event.data.cancel_at };
    case 'SubscriptionResumed':
      return { ...state, cancelAt: null };
    case 'PaymentFailed':
      return { ...state, status: 'PAST_DUE', graceEndsAt: event.data.grace_ends_at };
    case 'TrialExpired':
    case 'SubscriptionExpired':
      return { ...state, status: 'EXPIRED', graceEndsAt: null };
    case 'InstanceCanceled':
      return { ...state, status: 'CANCELED', cancelAt: event.data.canceled_at, graceEndsAt: null };
    default:
      return state;
  }
}

const plus = (iso: string, ms: number) => new Date(Date.parse(iso) + ms).toISOString();

/** When the next transition is due, or null when none will come by time alone. */
export function billingDueAt(state: BillingState, rule: RenewalRule): string | null {
  switch (state.status) {
    case 'TRIALING':
      return state.expiredAt;
    case 'ACTIVE':
      if (state.cancelAt) return state.cancelAt;
      // A provider that renews by invoice has until the grace's end to say the period was paid.
      return rule.renewsItself ? state.expiredAt : plus(state.expiredAt, rule.graceMs);
    case 'PAST_DUE':
      return state.graceEndsAt;
    default:
      return null;
  }
}

export function decideBilling(command: BillingCommand, state: BillingState): InstanceEvent[] {
  switch (command.type) {
    case 'Subscribe': {
      if (state.status === 'ACTIVE') throw conflict('the instance already has an active subscription');
      const { at, expired_at, provider_subscription_id } = command.data;
      return [
        {
          type: 'SubscriptionStarted',
          data: { started_at: at, expired_at, ...(provider_subscription_id === undefined ? {} : { provider_subscription_id }) },
        },
      ];
    }
    case 'CancelInstance':
      switch (state.status) {
        case 'CANCELED':
          throw conflict('the instance is already canceled');
        case 'ACTIVE':
          // The paid period is kept; scheduling twice changes nothing.
          return state.cancelAt ? [] : [{ type: 'SubscriptionCancellationScheduled', data: { cancel_at: state.expiredAt } }];
        default:
          return [{ type: 'InstanceCanceled', data: { canceled_at: command.data.at } }];
      }
    case 'ResumeSubscription':
      if (state.status !== 'ACTIVE' || !state.cancelAt) throw conflict('there is no scheduled cancellation to resume');
      return [{ type: 'SubscriptionResumed', data: {} }];
    case 'ReachDueTime':
      return dueTransition(state, command.data.at, command.data.rule);
    case 'RecordRenewal': {
      const renewable = state.status === 'ACTIVE' || state.status === 'PAST_DUE';
      // Providers repeat their notifications: a period already known is no news.
      if (!renewable || Date.parse(command.data.expired_at) <= Date.parse(state.expiredAt)) return [];
      return [{ type: 'SubscriptionRenewed', data: command.data }];
    }
    case 'RecordPaymentFailure':
      return state.status === 'ACTIVE' ? [{ type: 'PaymentFailed', data: command.data }] : [];
    case 'RecordCancelAtPeriodEnd':
      // Our own cancel and resume come back this way too: only a difference is news.
      if (state.status !== 'ACTIVE' || (state.cancelAt !== null) === command.data.cancel_at_period_end) return [];
      return command.data.cancel_at_period_end
        ? [{ type: 'SubscriptionCancellationScheduled', data: { cancel_at: state.expiredAt } }]
        : [{ type: 'SubscriptionResumed', data: {} }];
    case 'EndSubscription':
      if (state.status === 'ACTIVE' && state.cancelAt) return [{ type: 'InstanceCanceled', data: { canceled_at: state.cancelAt } }];
      if (state.status === 'ACTIVE' || state.status === 'PAST_DUE') return [{ type: 'SubscriptionExpired', data: { expired_at: command.data.at } }];
      return [];
  }
}

/** The transition due at `at`, recorded with the time it was due, so a late timer records the same. */
function dueTransition(state: BillingState, at: string, rule: RenewalRule): InstanceEvent[] {
  const due = billingDueAt(state, rule);
  if (due === null || Date.parse(at) < Date.parse(due)) return [];
  switch (state.status) {
    case 'TRIALING':
      return [{ type: 'TrialExpired', data: { expired_at: due } }];
    case 'ACTIVE':
      if (state.cancelAt) return [{ type: 'InstanceCanceled', data: { canceled_at: state.cancelAt } }];
      if (rule.renewsItself) return [{ type: 'SubscriptionRenewed', data: { expired_at: plus(state.expiredAt, rule.periodMs) } }];
      return [{ type: 'SubscriptionExpired', data: { expired_at: due } }];
    case 'PAST_DUE':
      return [{ type: 'SubscriptionExpired', data: { expired_at: due } }];
    default:
      return [];
  }
}
