import { instanceDecider, type InstanceCommand } from '../../src/domain/instance/instance-decider.js';
import type { InstanceEvent } from '../../src/domain/instance/events.js';
import { deciderSpec } from '../support/decider-spec.js';

const spec = deciderSpec(instanceDecider);

const createData = {
  instance_id: '3EABC',
  account_id: 'acc_1',
  name: 'shop',
  token_hash: 'h1',
  webhook_secret_sealed: 's1',
  reject_calls: false,
  auto_read_messages: false,
  labels: {},
  expired_at: '2026-12-01T00:00:00.000Z',
};
const created: InstanceEvent = { type: 'InstanceCreated', data: { ...createData, billing_status: 'TRIALING' } };
const create = (webhook: { url?: string; events?: ('Message' | 'All')[] } = {}): InstanceCommand => ({
  type: 'CreateInstance',
  data: { ...createData, webhook },
});
const configured = (url: string, events: ('Message' | 'All' | 'Connected')[]): InstanceEvent => ({
  type: 'WebhookConfigured',
  data: { url, events },
});
const update = (data: Partial<{ name: string; reject_calls: boolean; webhook: { url?: string; events?: ('Message' | 'Connected')[] } }>): InstanceCommand => ({
  type: 'UpdateInstance',
  data: { name: 'shop', webhook: {}, ...data },
});

describe('instance decider', () => {
  describe('CreateInstance', () => {
    it('creates a trialing instance', () => spec.given([]).when(create()).then([created]));

    it('records the webhook given at creation as a WebhookConfigured', () =>
      spec.given([]).when(create({ url: 'https://h.example/x', events: ['Message'] })).then([created, configured('https://h.example/x', ['Message'])]));

    it('keeps events chosen without a URL', () =>
      spec.given([]).when(create({ events: ['All'] })).then([created, configured('', ['All'])]));

    it('refuses an existing id', () => spec.given([created]).when(create()).thenThrows('conflict'));
  });

  describe('UpdateInstance', () => {
    it('records only the fields that change', () =>
      spec.given([created]).when(update({ name: 'store', reject_calls: false })).then([{ type: 'InstanceUpdated', data: { name: 'store' } }]));

    it('changes nothing when nothing differs', () => spec.given([created]).when(update({})).thenNothingHappened());

    it('keeps the events when only the URL changes', () =>
      spec
        .given([created, configured('https://a.example/', ['Message'])])
        .when(update({ webhook: { url: 'https://b.example/' } }))
        .then([configured('https://b.example/', ['Message'])]));

    it('clears the webhook with an empty URL', () =>
      spec
        .given([created, configured('https://a.example/', ['Message'])])
        .when(update({ webhook: { url: '' } }))
        .then([{ type: 'WebhookCleared', data: {} }]));

    it('refuses a canceled instance: it must be paid for again', () =>
      spec
        .given([created, { type: 'InstanceCanceled', data: { canceled_at: '2026-11-24T00:00:00.000Z' } }])
        .when(update({ name: 'again' }))
        .thenThrows('payment_required'));

    it('refuses an unknown instance', () => spec.given([]).when(update({ name: 'x' })).thenThrows('not_found'));
  });

  describe('ConfigureWebhook', () => {
    it('changes only the events when the URL is omitted', () =>
      spec
        .given([created, configured('https://a.example/', ['Message'])])
        .when({ type: 'ConfigureWebhook', data: { events: ['Connected'] } })
        .then([configured('https://a.example/', ['Connected'])]));

    it('does nothing when the configuration is the same', () =>
      spec
        .given([created, configured('https://a.example/', ['Message'])])
        .when({ type: 'ConfigureWebhook', data: { url: 'https://a.example/' } })
        .thenNothingHappened());

    it('does nothing when clearing an absent webhook', () =>
      spec.given([created]).when({ type: 'ConfigureWebhook', data: { url: '' } }).thenNothingHappened());
  });

  describe('credentials and cancellation', () => {
    it('rotates the token', () =>
      spec.given([created]).when({ type: 'RotateInstanceToken', data: { token_hash: 'h2' } }).then([{ type: 'InstanceTokenRotated', data: { token_hash: 'h2' } }]));

    it('refuses to rotate a canceled instance token', () =>
      spec
        .given([created, { type: 'InstanceCanceled', data: { canceled_at: '2026-11-24T00:00:00.000Z' } }])
        .when({ type: 'RotateInstanceToken', data: { token_hash: 'h2' } })
        .thenThrows('conflict'));
  });
});

describe('instance decider: billing', () => {
  const T = (s: string) => `2026-12-${s}.000Z`;
  const trialEnd = createData.expired_at; // 2026-12-01T00:00:00
  const DAY = 86_400_000;
  const none = { renewsItself: true, periodMs: 30 * DAY, graceMs: 3 * DAY };
  const byInvoice = { ...none, renewsItself: false };
  const started: InstanceEvent = { type: 'SubscriptionStarted', data: { started_at: T('01T00:00:00'), expired_at: T('31T00:00:00') } };
  const scheduled: InstanceEvent = { type: 'SubscriptionCancellationScheduled', data: { cancel_at: T('31T00:00:00') } };
  const failed: InstanceEvent = { type: 'PaymentFailed', data: { grace_ends_at: T('04T00:00:00') } };
  const trialExpired: InstanceEvent = { type: 'TrialExpired', data: { expired_at: trialEnd } };
  const canceled: InstanceEvent = { type: 'InstanceCanceled', data: { canceled_at: T('02T00:00:00') } };
  const expired: InstanceEvent = { type: 'SubscriptionExpired', data: { expired_at: T('04T00:00:00') } };
  const subscribe: InstanceCommand = { type: 'Subscribe', data: { at: T('02T00:00:00'), expired_at: T('31T00:00:00') } };
  const cancel = (at = T('02T00:00:00')): InstanceCommand => ({ type: 'CancelInstance', data: { at } });
  const tick = (at: string, rule = none): InstanceCommand => ({ type: 'ReachDueTime', data: { at, rule } });
  const startedAt2: InstanceEvent = { type: 'SubscriptionStarted', data: { started_at: T('02T00:00:00'), expired_at: T('31T00:00:00') } };

  describe('Subscribe', () => {
    for (const [from, history] of [
      ['TRIALING', [created]],
      ['EXPIRED', [created, trialExpired]],
      ['CANCELED', [created, canceled]],
      ['PAST_DUE', [created, started, failed]],
    ] as const) {
      it(`starts a paid period from ${from}`, () => spec.given([...history]).when(subscribe).then([startedAt2]));
    }

    it('keeps the provider subscription id', () =>
      spec
        .given([created])
        .when({ type: 'Subscribe', data: { ...(subscribe.data as { at: string; expired_at: string }), provider_subscription_id: 'sub_1' } })
        .then([{ type: 'SubscriptionStarted', data: { ...startedAt2.data, provider_subscription_id: 'sub_1' } } as InstanceEvent]));

    it('refuses an instance that is already ACTIVE', () => spec.given([created, started]).when(subscribe).thenThrows('conflict'));
    it('refuses an ACTIVE instance with a scheduled cancellation (resume it instead)', () =>
      spec.given([created, started, scheduled]).when(subscribe).thenThrows('conflict'));
    it('refuses an unknown instance', () => spec.given([]).when(subscribe).thenThrows('not_found'));
  });

  describe('CancelInstance', () => {
    it('schedules the cancellation of an ACTIVE instance at the end of its period', () =>
      spec.given([created, started]).when(cancel()).then([scheduled]));
    it('changes nothing when the cancellation is already scheduled', () =>
      spec.given([created, started, scheduled]).when(cancel()).thenNothingHappened());
    for (const [from, history] of [
      ['TRIALING', [created]],
      ['PAST_DUE', [created, started, failed]],
      ['EXPIRED', [created, trialExpired]],
    ] as const) {
      it(`cancels ${from} at once`, () => spec.given([...history]).when(cancel()).then([canceled]));
    }
    it('refuses a CANCELED instance', () => spec.given([created, canceled]).when(cancel()).thenThrows('conflict'));
  });

  describe('ResumeSubscription', () => {
    const resume: InstanceCommand = { type: 'ResumeSubscription', data: {} };
    it('takes back a scheduled cancellation', () =>
      spec.given([created, started, scheduled]).when(resume).then([{ type: 'SubscriptionResumed', data: {} }]));
    for (const [from, history] of [
      ['TRIALING', [created]],
      ['ACTIVE without cancel_at', [created, started]],
      ['PAST_DUE', [created, started, failed]],
      ['EXPIRED', [created, trialExpired]],
      ['CANCELED', [created, canceled]],
    ] as const) {
      it(`refuses ${from}`, () => spec.given([...history]).when(resume).thenThrows('conflict'));
    }
  });

  describe('due times', () => {
    it('ends the trial at its end, not a millisecond before', () => {
      spec.given([created]).when(tick('2026-11-30T23:59:59.999Z')).thenNothingHappened();
      spec.given([created]).when(tick(trialEnd)).then([trialExpired]);
    });

    it('records the time a transition was due, however late the timer is', () =>
      spec.given([created]).when(tick(T('09T00:00:00'))).then([trialExpired]));

    it('renews an ACTIVE period at its end when the provider renews by itself', () => {
      spec.given([created, started]).when(tick('2026-12-30T23:59:59.999Z')).thenNothingHappened();
      spec.given([created, started]).when(tick(T('31T00:00:00'))).then([{ type: 'SubscriptionRenewed', data: { expired_at: '2027-01-30T00:00:00.000Z' } }]);
    });

    it('catches up one period at a time, so no renewal is skipped', () => {
      const first: InstanceEvent = { type: 'SubscriptionRenewed', data: { expired_at: '2027-01-30T00:00:00.000Z' } };
      spec.given([created, started, first]).when(tick('2027-03-01T00:00:00.000Z')).then([{ type: 'SubscriptionRenewed', data: { expired_at: '2027-03-01T00:00:00.000Z' } }]);
    });

    it('gives an invoicing provider until the grace ends, then expires the unpaid period', () => {
      spec.given([created, started]).when(tick('2027-01-02T23:59:59.999Z', byInvoice)).thenNothingHappened();
      spec.given([created, started]).when(tick('2027-01-03T00:00:00.000Z', byInvoice)).then([
        { type: 'SubscriptionExpired', data: { expired_at: '2027-01-03T00:00:00.000Z' } },
      ]);
    });

    it('cancels at cancel_at', () => {
      spec.given([created, started, scheduled]).when(tick('2026-12-30T23:59:59.999Z')).thenNothingHappened();
      spec.given([created, started, scheduled]).when(tick(T('31T00:00:00'))).then([{ type: 'InstanceCanceled', data: { canceled_at: T('31T00:00:00') } }]);
    });

    it('expires a PAST_DUE instance when the grace ends', () => {
      spec.given([created, started, failed]).when(tick('2026-12-03T23:59:59.999Z')).thenNothingHappened();
      spec.given([created, started, failed]).when(tick(T('04T00:00:00'))).then([expired]);
    });

    for (const [what, history] of [
      ['EXPIRED', [created, trialExpired]],
      ['CANCELED', [created, canceled]],
    ] as const) {
      it(`has nothing due once ${what}, so a repeated timer changes nothing`, () =>
        spec.given([...history]).when(tick('2030-01-01T00:00:00.000Z')).thenNothingHappened());
    }
  });

  describe("the provider's reports", () => {
    const renewal = (expired_at: string): InstanceCommand => ({ type: 'RecordRenewal', data: { expired_at } });
    it('records a paid renewal, which makes PAST_DUE ACTIVE again', () => {
      spec.given([created, started]).when(renewal('2027-01-30T00:00:00.000Z')).then([{ type: 'SubscriptionRenewed', data: { expired_at: '2027-01-30T00:00:00.000Z' } }]);
      spec.given([created, started, failed]).when(renewal('2027-01-30T00:00:00.000Z')).then([{ type: 'SubscriptionRenewed', data: { expired_at: '2027-01-30T00:00:00.000Z' } }]);
    });
    it('ignores a renewal it already knows, or one for a lapsed instance', () => {
      spec.given([created, started]).when(renewal(T('31T00:00:00'))).thenNothingHappened();
      spec.given([created, trialExpired]).when(renewal('2027-01-30T00:00:00.000Z')).thenNothingHappened();
    });
    it('records a failed payment of an ACTIVE instance, once', () => {
      spec.given([created, started]).when({ type: 'RecordPaymentFailure', data: failed.data as { grace_ends_at: string } }).then([failed]);
      spec.given([created, started, failed]).when({ type: 'RecordPaymentFailure', data: failed.data as { grace_ends_at: string } }).thenNothingHappened();
    });
    it('follows a cancellation scheduled or taken back at the provider, and ignores what it already knows', () => {
      const atPeriodEnd = (cancel_at_period_end: boolean): InstanceCommand => ({ type: 'RecordCancelAtPeriodEnd', data: { cancel_at_period_end } });
      spec.given([created, started]).when(atPeriodEnd(true)).then([scheduled]);
      spec.given([created, started, scheduled]).when(atPeriodEnd(true)).thenNothingHappened();
      spec.given([created, started, scheduled]).when(atPeriodEnd(false)).then([{ type: 'SubscriptionResumed', data: {} }]);
      spec.given([created, started]).when(atPeriodEnd(false)).thenNothingHappened();
      spec.given([created, started, failed]).when(atPeriodEnd(true)).thenNothingHappened();
    });

    it('turns the end of a subscription into CANCELED when it was scheduled, EXPIRED otherwise', () => {
      const end: InstanceCommand = { type: 'EndSubscription', data: { at: T('04T00:00:00') } };
      spec.given([created, started, scheduled]).when(end).then([{ type: 'InstanceCanceled', data: { canceled_at: T('31T00:00:00') } }]);
      spec.given([created, started, failed]).when(end).then([expired]);
      spec.given([created, canceled]).when(end).thenNothingHappened();
    });
  });

  describe('while lapsed', () => {
    for (const [what, history] of [
      ['EXPIRED', [created, trialExpired]],
      ['CANCELED', [created, canceled]],
    ] as const) {
      it(`refuses webhook changes of an ${what} instance with payment_required`, () => {
        spec.given([...history]).when({ type: 'ConfigureWebhook', data: { url: 'https://a.example/' } }).thenThrows('payment_required');
        spec.given([...history]).when({ type: 'RotateWebhookSecret', data: { webhook_secret_sealed: 's2' } }).thenThrows('payment_required');
      });
    }
    it('takes changes again once subscribed', () =>
      spec
        .given([created, canceled, startedAt2])
        .when({ type: 'ConfigureWebhook', data: { url: 'https://a.example/' } })
        .then([configured('https://a.example/', [])]));
  });
});
