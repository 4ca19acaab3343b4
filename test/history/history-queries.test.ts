import type { RecordedEvent } from '../../src/domain/recorded.js';
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedDocumentStore } from '../../src/infra/docstore/embedded/embedded-document-store.js';
import { EmbeddedEventStore } from '../../src/infra/eventstore/embedded/embedded-event-store.js';
import type { EventData } from '../../src/infra/eventstore/port.js';
import { historyProjection } from '../../src/projections/history/history-projection.js';
import { HistoryQueries } from '../../src/projections/history/history-queries.js';

describe('history pages from the index and the log', () => {
  let dir: string;
  let events: EmbeddedEventStore;
  let docs: EmbeddedDocumentStore;
  let now = Date.UTC(2030, 0, 1);
  let n = 0;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'history-'));
    events = await EmbeddedEventStore.open({ path: join(dir, 'events'), now: () => now });
    docs = await EmbeddedDocumentStore.open({ path: join(dir, 'docs') });
    await historyProjection.setup?.(docs);
  });
  afterEach(async () => {
    await events.close();
    await docs.close();
    await rm(dir, { recursive: true, force: true });
  });

  const event = (type: string, data: Record<string, unknown>, metadata: Record<string, unknown> = {}): EventData => ({ id: `e${++n}`, type, data, metadata });

  /** What the runner does: every event of the log through the projection, then the writes. */
  async function project(): Promise<void> {
    // These events carry only what the pages show, so they are not ones the schemas accept: they
    // are handed over as they are, the history projection reading no more than the envelope.
    const ops = (await events.readAll()).flatMap((e) => historyProjection.apply(e as unknown as RecordedEvent));
    await docs.batch(ops);
  }

  it('shows data past its retention as null, and keeps the rest', async () => {
    await events.setStreamMetadata('session-I1', { maxAgeSeconds: 60 });
    await events.append('instance-I1', [event('InstanceCreated', { name: 'a', token_hash: 'h' })], 'any');
    await events.append('session-I1', [event('MessageReceived', { message: { text: 'old' } })], 'any');
    now += 120_000;
    await events.append('session-I1', [event('MessageReceived', { message: { text: 'new' } })], 'any');
    await events.append('instance-I1', [event('InstanceUpdated', { name: 'b' })], 'any');
    await project();
    const page = await new HistoryQueries(docs, events).page({ instanceId: 'I1' }, { limit: 10 });
    expect(page.events.map((e) => [e.type, e.data])).to.deep.equal([
      ['InstanceCreated', { name: 'a', token_hash: '[redacted]' }],
      ['MessageReceived', null],
      ['MessageReceived', { message: { text: 'new' } }],
      ['InstanceUpdated', { name: 'b' }],
    ]);
    expect(page.next).to.equal(null);
  });

  it('pages interleaved streams in log order, and reads events stored before actors as the system', async () => {
    for (let i = 0; i < 7; i++) {
      await events.append(i % 2 ? 'session-I2' : 'instance-I2', [event('InstanceUpdated', { name: `n${i}` }, i === 3 ? { actor: { kind: 'instance', id: 'I2' } } : {})], 'any');
      await events.append('instance-OTHER', [event('InstanceUpdated', { name: 'other' })], 'any');
    }
    await project();
    const queries = new HistoryQueries(docs, events);
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await queries.page({ instanceId: 'I2' }, after === undefined ? { limit: 3 } : { limit: 3, after });
      seen.push(...page.events.map((e) => String(e.data?.name)));
      if (page.events[0]?.data?.name === 'n3') expect(page.events[0].actor).to.deep.equal({ kind: 'instance_token', id: 'I2' });
      if (page.next === null) break;
      after = page.next;
    }
    expect(seen).to.deep.equal(['n0', 'n1', 'n2', 'n3', 'n4', 'n5', 'n6']);
    const first = await queries.page({ instanceId: 'I2' }, { limit: 1 });
    expect(first.events[0]).to.deep.include({ actor: { kind: 'system' }, correlation_id: null, causation_id: null, stream: 'instance-I2', revision: 0 });
  });
});
