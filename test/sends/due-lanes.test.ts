import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { SendPacer } from '../../src/commands/send-pacing/pacer.js';
import { QueuedSends } from '../../src/commands/send-pacing/queued-sends.js';
import { systemClock } from '../../src/infra/clock.js';
import { openDocumentStore } from '../../src/infra/docstore/open-document-store.js';
import type { Collection, Document, DocumentStore } from '../../src/infra/docstore/port.js';
import type { EventStore } from '../../src/infra/eventstore/port.js';
import { SEND_LANES, laneId, type SendLaneDoc } from '../../src/projections/sends/send-lanes.js';
import { SEND_QUEUE, sendQueueProjection, type QueuedSendDoc } from '../../src/projections/sends/send-queue-projection.js';
import type { SessionRecorder } from '../../src/sessions/session-recorder.js';
import { testBackendsFor } from '../support/gateway.js';
import { waitFor } from '../support/sandbox.js';

/** `target` with some methods replaced, the others bound to it. */
function overriding<T extends object>(target: T, methods: Partial<T>): T {
  return new Proxy(target, {
    get(t, prop) {
      if (Object.hasOwn(methods, prop)) return (methods as Record<PropertyKey, unknown>)[prop];
      const value: unknown = Reflect.get(t, prop, t);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(t) : value;
    },
  });
}

/** The store, with the lane documents each read hands back counted. */
function countingLaneReads(inner: DocumentStore): { docs: DocumentStore; read: () => number } {
  let read = 0;
  const counted = <T extends Document>(c: Collection<T>): Collection<T> =>
    overriding(c, {
      find: async (...args: Parameters<Collection<T>['find']>) => {
        const found = await c.find(...args);
        read += found.length;
        return found;
      },
      findOne: async (...args: Parameters<Collection<T>['findOne']>) => {
        const found = await c.findOne(...args);
        if (found) read++;
        return found;
      },
    });
  const docs = overriding(inner, {
    collection: <T extends Document>(name: string) => (name === SEND_LANES ? counted(inner.collection<T>(name)) : inner.collection<T>(name)),
  });
  return { docs, read: () => read };
}

/**
 * The send queue's worker finds the due lanes by their due time (an index), so a pass costs the
 * due lanes, not every chat with something queued: 3,000 chats waiting an hour (a session down,
 * chats that keep failing) are not read while one due chat's send is tried.
 */
describe('queued sends: a pass reads the due lanes only', function () {
  this.timeout(60_000);
  let dir: string;
  let store: DocumentStore;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gw-due-lanes-'));
    const backends = await testBackendsFor(dir);
    store = await openDocumentStore({ DATA_DIR: dir, MONGODB_URL: backends.MONGODB_URL ?? '' });
    await sendQueueProjection(() => undefined).setup?.(store);
  });
  after(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('tries the one due send without reading 3,000 waiting lanes', async () => {
    const later = Date.now() + 3_600_000;
    const waiting: SendLaneDoc[] = Array.from({ length: 3000 }, (_, i) => ({
      _id: laneId('waiting-instance', `55110000${String(i).padStart(5, '0')}@s.whatsapp.net`),
      instance_id: 'waiting-instance',
      chat: `55110000${String(i).padStart(5, '0')}@s.whatsapp.net`,
      head_id: `waiting-${i}`,
      head_pos: i + 1,
      due_ms: later,
      last_pos: i + 1,
    }));
    const to = '5511999999999@s.whatsapp.net';
    const send: QueuedSendDoc = {
      _id: '3EB0DUE0000000000001',
      instance_id: 'due-instance',
      account_id: 'acc',
      pos: 10_000,
      state: 'pending',
      attempts: 0,
      due_ms: 0,
      queued_ms: Date.now(),
      correlation_id: 'corr',
      actor: { kind: 'account', id: 'acc' },
      queued_event_id: 'evt',
      send: { message_id: '3EB0DUE0000000000001', to, content: { kind: 'text', text: 'due now' } },
    };
    await store.collection<SendLaneDoc>(SEND_LANES).insertMany(waiting);
    await store.collection<QueuedSendDoc>(SEND_QUEUE).insertOne(send);
    await store
      .collection<SendLaneDoc>(SEND_LANES)
      .insertOne({ _id: laneId('due-instance', to), instance_id: 'due-instance', chat: to, head_id: send._id, head_pos: send.pos, due_ms: 0, last_pos: send.pos });

    const { docs, read } = countingLaneReads(store);
    const unused = new Proxy({}, { get: () => { throw new Error('not used by a send that finds no connection'); } });
    const sends = new QueuedSends({
      docs,
      events: unused as EventStore,
      recorder: unused as SessionRecorder,
      // No connection: the send is tried, fails for now, and its chat waits 5 s.
      liveConnection: () => null,
      pacer: new SendPacer({ perMinute: null, jitterMs: 0 }, () => Date.now()),
      clock: systemClock,
      logger: pino({ level: 'silent' }),
    });
    await sends.start();
    try {
      await waitFor(async () => (await store.collection<QueuedSendDoc>(SEND_QUEUE).findOne({ _id: send._id }))?.attempts === 1, 'the due send tried');
    } finally {
      await sends.stop();
    }
    const lane = await store.collection<SendLaneDoc>(SEND_LANES).findOne({ _id: laneId('due-instance', to) });
    expect(lane?.due_ms).to.be.greaterThan(Date.now());
    // A page of waiting lanes per pass at most (the worker took a pass or two), never all of them.
    expect(read()).to.be.below(500);
  });
});
