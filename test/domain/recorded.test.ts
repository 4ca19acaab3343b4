import { expect } from 'chai';
import { typedEvent, typedEvents, type UntypedRecordedEvent } from '../../src/domain/recorded.js';

let position = 0n;
const stored = (type: string, data: unknown): UntypedRecordedEvent => ({
  id: `e${++position}`,
  type,
  streamId: 'instance-I',
  revision: position,
  position,
  data,
  metadata: {},
  created: new Date(0),
});

describe('recorded events, typed where the log is read', () => {
  it('types an event whose data matches its schema, and `type` narrows `data`', () => {
    const typed = typedEvent(stored('InstanceTokenRotated', { token_hash: 'h' }));
    expect(typed.ok).to.equal(true);
    if (!typed.ok || typed.event.type !== 'InstanceTokenRotated') return expect.fail('not typed');
    expect(typed.event.data.token_hash).to.equal('h');
  });

  it('refuses an unknown type and data that does not match, saying where', () => {
    expect(typedEvent(stored('Tick', {}))).to.deep.equal({ ok: false, reason: 'unknown event type Tick' });
    const wrong = typedEvent(stored('InstanceTokenRotated', { token_hash: 7 }));
    expect(wrong.ok).to.equal(false);
    expect(wrong.ok ? '' : wrong.reason).to.match(/^\/token_hash: /);
    expect(typedEvent(stored('InstanceCanceled', { canceled_at: 'yesterday' })).ok).to.equal(false);
  });

  it('leaves malformed events out of a list and hands each to the reporter', () => {
    const skipped: string[] = [];
    const events = typedEvents(
      [stored('WebhookCleared', {}), stored('WebhookCleared', null), stored('InstanceCanceled', { canceled_at: '2030-01-01T00:00:00Z' })],
      (raw, reason) => skipped.push(`${raw.id} ${reason}`),
    );
    expect(events.map((e) => e.type)).to.deep.equal(['WebhookCleared', 'InstanceCanceled']);
    expect(skipped).to.have.length(1);
  });
});
