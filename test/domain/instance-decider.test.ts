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

    it('refuses a canceled instance', () =>
      spec
        .given([created, { type: 'InstanceCanceled', data: { canceled_at: '2026-11-24T00:00:00.000Z' } }])
        .when(update({ name: 'again' }))
        .thenThrows('conflict'));

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

    it('cancels once; a second cancel changes nothing', () => {
      const canceled: InstanceEvent = { type: 'InstanceCanceled', data: { canceled_at: '2026-11-24T00:00:00.000Z' } };
      spec.given([created]).when({ type: 'CancelInstance', data: canceled.data }).then([canceled]);
      spec.given([created, canceled]).when({ type: 'CancelInstance', data: canceled.data }).thenNothingHappened();
    });

    it('refuses to rotate a canceled instance token', () =>
      spec
        .given([created, { type: 'InstanceCanceled', data: { canceled_at: '2026-11-24T00:00:00.000Z' } }])
        .when({ type: 'RotateInstanceToken', data: { token_hash: 'h2' } })
        .thenThrows('conflict'));
  });
});
