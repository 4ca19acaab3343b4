import { expect } from 'chai';
import type { WriteOp } from '../../src/infra/docstore/port.js';
import type { RecordedEvent } from '../../src/domain/recorded.js';
import { latencyBucket, p95 } from '../../src/projections/stats/histogram.js';
import { StatsProjection } from '../../src/projections/stats/stats-projection.js';

let position = 0n;
function event(type: string, at: string, data: Record<string, unknown> = {}): RecordedEvent {
  position += 1n;
  // Only the fields the projection reads: a partial event, so it is not one the schemas accept.
  return { id: `e${position}`, type, streamId: 'session-I', revision: position, position, data, metadata: { instanceId: 'I', occurredAt: at }, created: new Date(at) } as unknown as RecordedEvent;
}

/** The increments the ops make to each bucket, by bucket id. */
function incs(ops: WriteOp[]): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const op of ops) if (op.op === 'updateOne' && op.update.$inc) out[String(op.filter._id)] = op.update.$inc;
  return out;
}

describe('statistics projection', () => {
  it('counts a message each way with its media, and not the old messages a history sync brings', () => {
    const p = new StatsProjection();
    const inbound = incs(p.apply(event('MessageReceived', '2030-01-01T10:15:00Z', { upsert: 'notify', message: { from_me: false, media: { kind: 'image' } } })));
    expect(inbound).to.deep.equal({
      'I|hour|2030-01-01T10:00:00.000Z': { messages_in: 1, media_in: 1 },
      'I|day|2030-01-01T00:00:00.000Z': { messages_in: 1, media_in: 1 },
    });
    const fromPhone = incs(p.apply(event('MessageReceived', '2030-01-01T10:16:00Z', { upsert: 'notify', message: { from_me: true } })));
    expect(fromPhone['I|hour|2030-01-01T10:00:00.000Z']).to.deep.equal({ messages_out: 1 });
    expect(p.apply(event('MessageReceived', '2030-01-01T10:17:00Z', { upsert: 'append', message: { from_me: false } }))).to.deep.equal([]);
  });

  it('splits connected time over the hours it spans, once, even when the disconnect is applied again', () => {
    const p = new StatsProjection();
    p.apply(event('SessionConnected', '2030-01-01T10:30:00Z', { jid: 'j', phone: '1', business: false }));
    const close = event('SessionDisconnected', '2030-01-01T12:15:00Z', { reason: 'connection_lost' });
    const first = incs(p.apply(close));
    expect(first).to.deep.equal({
      'I|hour|2030-01-01T10:00:00.000Z': { connected_seconds: 1800 },
      'I|hour|2030-01-01T11:00:00.000Z': { connected_seconds: 3600 },
      'I|hour|2030-01-01T12:00:00.000Z': { connected_seconds: 900 },
      'I|day|2030-01-01T00:00:00.000Z': { connected_seconds: 6300 },
    });
    // A batch whose commit failed is read again: the same disconnect writes the same increments.
    expect(incs(p.apply(close))).to.deep.equal(first);
    // Another close without a connect counts nothing.
    expect(incs(p.apply(event('SessionLoggedOut', '2030-01-01T13:00:00Z', { by: 'user' })))).to.deep.equal({});
  });

  it('reads p95 from a bounded histogram, null without deliveries', () => {
    expect(p95(new Array(24).fill(0))).to.equal(null);
    const histogram = new Array<number>(24).fill(0);
    for (let i = 0; i < 95; i++) histogram[latencyBucket(90)]! += 1;
    for (let i = 0; i < 5; i++) histogram[latencyBucket(5000)]! += 1;
    expect(p95(histogram)).to.equal(128);
    histogram[latencyBucket(5000)]! += 1;
    expect(p95(histogram)).to.equal(8192);
    expect(latencyBucket(10 ** 9)).to.equal(23);
  });
});
