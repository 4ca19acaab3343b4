import { expect } from 'chai';
import type { InstanceEvent } from '../../src/domain/instance/events.js';
import { evolveInstanceView, type InstanceView, type InstanceViewEvent } from '../../src/domain/instance/instance-view.js';

const created: InstanceEvent = {
  type: 'InstanceCreated',
  data: {
    instance_id: '3EVIEW',
    account_id: 'acc',
    name: 'shop',
    token_hash: 'h',
    webhook_secret_sealed: 's',
    reject_calls: false,
    auto_read_messages: false,
    labels: {},
    billing_status: 'TRIALING',
    expired_at: '2026-12-08T00:00:00.000Z',
  },
};

const fold = (events: [InstanceViewEvent, string][]) => events.reduce<InstanceView | null>((view, [e, at]) => evolveInstanceView(view, e, at), null);

describe('the Instance view fold', () => {
  it('is nothing before the instance exists, whatever its session did', () =>
    expect(fold([[{ type: 'SessionDisconnected', data: { reason: 'connection_closed' } }, '2026-12-01T00:00:00.000Z']])).to.equal(null));

  it('moves updated_at on changes to the instance, not on what its session does', () => {
    const view = fold([
      [created, '2026-12-01T00:00:00.000Z'],
      [{ type: 'InstanceUpdated', data: { name: 'store' } }, '2026-12-01T00:00:01.000Z'],
      [{ type: 'SessionConnected', data: { jid: '1@s.whatsapp.net', phone: '1', business: false, push_name: 'Ana' } }, '2026-12-01T00:00:02.000Z'],
    ]);
    expect(view).to.include({ name: 'store', updated_at: '2026-12-01T00:00:01.000Z', connected: true, connected_at: '2026-12-01T00:00:02.000Z', whatsapp_push_name: 'Ana' });
  });

  it('follows billing: subscription, scheduled cancellation, resume, lapse', () => {
    const base: [InstanceViewEvent, string][] = [
      [created, '2026-12-01T00:00:00.000Z'],
      [{ type: 'SubscriptionStarted', data: { started_at: '2026-12-02T00:00:00.000Z', expired_at: '2027-01-01T00:00:00.000Z' } }, '2026-12-02T00:00:00.000Z'],
      [{ type: 'SubscriptionCancellationScheduled', data: { cancel_at: '2027-01-01T00:00:00.000Z' } }, '2026-12-03T00:00:00.000Z'],
    ];
    expect(fold(base)).to.include({ billing_status: 'ACTIVE', expired_at: '2027-01-01T00:00:00.000Z', cancel_at: '2027-01-01T00:00:00.000Z' });
    expect(fold([...base, [{ type: 'SubscriptionResumed', data: {} }, '2026-12-04T00:00:00.000Z']])).to.include({ cancel_at: null });
    expect(fold([...base, [{ type: 'InstanceCanceled', data: { canceled_at: '2027-01-01T00:00:00.000Z' } }, '2027-01-01T00:00:00.000Z']])).to.include({
      billing_status: 'CANCELED',
      cancel_at: '2027-01-01T00:00:00.000Z',
    });
    expect(fold([[created, '2026-12-01T00:00:00.000Z'], [{ type: 'TrialExpired', data: { expired_at: '2026-12-08T00:00:00.000Z' } }, '2026-12-08T00:00:00.000Z']])).to.include({
      billing_status: 'EXPIRED',
      expired_at: '2026-12-08T00:00:00.000Z',
    });
  });
});
