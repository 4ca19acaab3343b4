import { instanceDecider, type InstanceCommand } from '../../src/domain/instance/instance-decider.js';
import type { InstanceEvent } from '../../src/domain/instance/events.js';
import { deciderSpec } from '../support/decider-spec.js';

const spec = deciderSpec(instanceDecider);

const created: InstanceEvent = {
  type: 'InstanceCreated',
  data: {
    instance_id: '3EABC',
    account_id: 'acc_1',
    name: 'shop',
    token_hash: 'h1',
    webhook_secret_sealed: 's1',
    reject_calls: false,
    auto_read_messages: false,
    labels: {},
    billing_status: 'TRIALING',
    expired_at: '2026-12-01T00:00:00.000Z',
  },
};
const configure = (events: ('Message' | 'All' | 'ReadReceipt')[]): InstanceCommand => ({ type: 'ConfigureExport', data: { events } });
const clear: InstanceCommand = { type: 'ClearExport', data: {} };
const configured = (events: ('Message' | 'All' | 'ReadReceipt')[]): InstanceEvent => ({ type: 'ExportConfigured', data: { events } });
const canceled: InstanceEvent = { type: 'InstanceCanceled', data: { canceled_at: '2026-11-24T00:00:00.000Z' } };

describe('instance decider: the event export', () => {
  it('records the event types chosen', () => spec.given([created]).when(configure(['Message', 'ReadReceipt'])).then([configured(['Message', 'ReadReceipt'])]));
  it('records a change of types', () => spec.given([created, configured(['Message'])]).when(configure(['All'])).then([configured(['All'])]));
  it('records nothing for the same types again', () => spec.given([created, configured(['Message'])]).when(configure(['Message'])).thenNothingHappened());
  it('clears an export that is on', () => spec.given([created, configured(['Message'])]).when(clear).then([{ type: 'ExportCleared', data: {} }]));
  it('records nothing when clearing an export that is off', () => spec.given([created, configured(['Message']), { type: 'ExportCleared', data: {} }]).when(clear).thenNothingHappened());
  it('refuses changes while canceled (402)', () => spec.given([created, configured(['Message']), canceled]).when(clear).thenThrows('payment_required'));
  it('refuses an unknown instance', () => spec.given([]).when(configure(['Message'])).thenThrows('not_found'));
});
