import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EXPORT_OUTBOX, type OutboxDoc } from '../../src/export/documents.js';
import { ExportReactor } from '../../src/export/export-reactor.js';
import { EmbeddedDocumentStore } from '../../src/infra/docstore/embedded/embedded-document-store.js';
import type { DocumentStore } from '../../src/infra/docstore/port.js';
import { ProjectionRunner } from '../../src/projections/runner.js';
import { logger, openHarness, type Harness } from '../webhooks/support/harness.js';

async function project(h: Harness, docs: DocumentStore, recording = true): Promise<void> {
  const runner = new ProjectionRunner(h.events, docs, [new ExportReactor(logger, recording)], logger);
  await runner.start();
  const caughtUp = await runner.waitFor(await h.events.headPosition(), ['export'], 10_000);
  await runner.stop();
  expect(caughtUp, 'caught up').to.equal(true);
}

const outbox = async (docs: DocumentStore) =>
  (await docs.collection<OutboxDoc>(EXPORT_OUTBOX).find({}, { sort: { seq: 1 } })).map((d) => ({ seq: d.seq, type: d.type, text: JSON.parse(d.body).event.Message.conversation as string, seqInBody: JSON.parse(d.body).seq as number }));

/** The seq CONTRACT gives the message with this text on every channel: its place in its instance's session stream. */
async function seqOf(h: Harness, text: string): Promise<number> {
  const event = (await h.events.readAll()).find((e) => e.streamId.startsWith('session-') && JSON.stringify(e.data).includes(`"${text}"`));
  if (!event) throw new Error(`no event with ${text}`);
  return Number(event.revision) + 1;
}

describe('export reactor (the outbox from the log)', function () {
  this.timeout(30_000);
  let h: Harness;
  let dir: string;

  beforeEach(async () => {
    h = await openHarness();
    await h.halt();
    dir = await mkdtemp(join(tmpdir(), 'export-reactor-'));
  });
  afterEach(async () => {
    await h.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('records what the instance exports at each event, nothing while it is lapsed or off, seq going on', async () => {
    const a = await h.instance('', []);
    await h.message(a.id, 'before the export');
    await h.append(`instance-${a.id}`, 'ExportConfigured', { events: ['Message'] });
    await h.message(a.id, 'one');
    await h.append(`instance-${a.id}`, 'TrialExpired', { expired_at: '2030-01-01T00:00:00.000Z' });
    await h.message(a.id, 'while expired');
    await h.append(`instance-${a.id}`, 'SubscriptionStarted', { started_at: '2030-01-02T00:00:00.000Z', expired_at: '2030-02-01T00:00:00.000Z' });
    await h.message(a.id, 'two');
    await h.append(`instance-${a.id}`, 'InstanceCanceled', { canceled_at: '2030-01-03T00:00:00.000Z' });
    await h.message(a.id, 'while canceled');
    await h.append(`instance-${a.id}`, 'SubscriptionStarted', { started_at: '2030-01-04T00:00:00.000Z', expired_at: '2030-02-01T00:00:00.000Z' });
    await h.append(`instance-${a.id}`, 'ExportCleared', {});
    await h.message(a.id, 'while off');
    await h.append(`instance-${a.id}`, 'ExportConfigured', { events: ['All'] });
    await h.message(a.id, 'three');

    const docs = await EmbeddedDocumentStore.open({ path: dir });
    try {
      await project(h, docs);
      const [one, two, three] = [await seqOf(h, 'one'), await seqOf(h, 'two'), await seqOf(h, 'three')];
      expect(await outbox(docs)).to.deep.equal([
        { seq: one, type: 'Message', text: 'one', seqInBody: one },
        { seq: two, type: 'Message', text: 'two', seqInBody: two },
        { seq: three, type: 'Message', text: 'three', seqInBody: three },
      ]);
    } finally {
      await docs.close();
    }
  });

  it('goes on from the highest seq after a restart, the outbox emptied by publishing', async () => {
    const a = await h.instance('', []);
    await h.append(`instance-${a.id}`, 'ExportConfigured', { events: ['Message'] });
    await h.message(a.id, 'one');
    const docs = await EmbeddedDocumentStore.open({ path: dir });
    try {
      await project(h, docs);
      // Published by every sink: the outbox is emptied, the cursor keeps the seq.
      await docs.batch([
        { collection: 'export_cursors', op: 'replaceOne', filter: { _id: `amqp:${a.id}` }, doc: { _id: `amqp:${a.id}`, sink: 'amqp', instance_id: a.id, published_seq: await seqOf(h, 'one'), published_at: null, last_error: null, last_error_at: null }, upsert: true },
        { collection: EXPORT_OUTBOX, op: 'deleteMany', filter: {} },
      ]);
      await h.message(a.id, 'two');
      await project(h, docs);
      const two = await seqOf(h, 'two');
      expect(two).to.be.greaterThan(await seqOf(h, 'one'));
      expect(await outbox(docs)).to.deep.equal([{ seq: two, type: 'Message', text: 'two', seqInBody: two }]);
    } finally {
      await docs.close();
    }
  });

  it('records nothing when no broker is configured, yet folds the settings', async () => {
    const a = await h.instance('', []);
    await h.append(`instance-${a.id}`, 'ExportConfigured', { events: ['Message'] });
    await h.message(a.id, 'one');
    const docs = await EmbeddedDocumentStore.open({ path: dir });
    try {
      await project(h, docs, false);
      expect(await outbox(docs)).to.deep.equal([]);
      expect((await docs.collection('export_settings').findOne({ _id: a.id }))?.events).to.deep.equal(['Message']);
    } finally {
      await docs.close();
    }
  });
});
