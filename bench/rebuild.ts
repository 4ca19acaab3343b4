import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { EmbeddedEventStore } from '../src/infra/eventstore/embedded/embedded-event-store.js';
import type { EventData } from '../src/infra/eventstore/port.js';
import { report } from './lib.js';

/**
 * The rebuild as `npm run rebuild` runs it: the built JavaScript. Run through `npm run bench`
 * only, which builds first (run alone, it would time whatever dist held).
 * Run from the TypeScript sources, its worker thread compiled them all again through tsx, a
 * tenth of the rebuild that no user pays.
 */
async function built() {
  const load = <T>(path: string): Promise<T> => import(pathToFileURL(resolve(fileURLToPath(import.meta.url), '../../dist', path)).href) as Promise<T>;
  return {
    ...(await load<typeof import('../src/infra/docstore/aliased-document-store.js')>('infra/docstore/aliased-document-store.js')),
    ...(await load<typeof import('../src/infra/docstore/embedded/embedded-document-store.js')>('infra/docstore/embedded/embedded-document-store.js')),
    ...(await load<typeof import('../src/infra/eventstore/embedded/embedded-event-store.js')>('infra/eventstore/embedded/embedded-event-store.js')),
    ...(await load<typeof import('../src/rebuild/progress.js')>('rebuild/progress.js')),
    ...(await load<typeof import('../src/rebuild/read-models.js')>('rebuild/read-models.js')),
    ...(await load<typeof import('../src/rebuild/rebuilder.js')>('rebuild/rebuilder.js')),
  };
}

const INSTANCES = 200;
const EVENTS = Number(process.env.BENCH_REBUILD_EVENTS ?? 100_000);
const APPEND_BATCH = 500;
const TARGET_PER_SECOND = 50_000;

const meta = (instanceId: string) => ({
  instanceId,
  accountId: 'acc_bench',
  occurredAt: new Date(Date.UTC(2030, 0, 1) + Math.floor(Math.random() * 7 * 86_400_000)).toISOString(),
  actor: { kind: 'network', id: 'sandbox' },
  correlationId: randomUUID(),
  causationId: randomUUID(),
});

/** The session traffic of a busy gateway: mostly messages each way, some receipts and presence. */
function sessionEvent(instanceId: string, i: number): EventData {
  const chat = `55119${String(i % 997).padStart(8, '0')}@s.whatsapp.net`;
  const kind = i % 20;
  if (kind === 0) return { id: randomUUID(), type: 'ReceiptReceived', data: { message_ids: [`M${i - 1}`], chat, sender: chat, state: 'Read', timestamp_s: 1_893_456_000 + i }, metadata: meta(instanceId) };
  if (kind === 1) return { id: randomUUID(), type: 'PresenceUpdated', data: { jid: chat, state: 'available' }, metadata: meta(instanceId) };
  const message = {
    id: `M${i}`,
    chat,
    sender: chat,
    from_me: kind % 3 === 0,
    is_group: false,
    push_name: 'Bench Contact',
    timestamp_s: 1_893_456_000 + i,
    type: 'text',
    text: 'Hello, this is a benchmark message of a typical chat length.',
  };
  return kind % 3 === 0
    ? { id: randomUUID(), type: 'MessageSent', data: { message, origin: 'api' }, metadata: meta(instanceId) }
    : { id: randomUUID(), type: 'MessageReceived', data: { message, upsert: 'notify' }, metadata: meta(instanceId) };
}

async function fillLog(events: EmbeddedEventStore): Promise<void> {
  for (let n = 0; n < INSTANCES; n++) {
    const id = `3EBENCH${String(n).padStart(23, '0')}`;
    await events.append(`instance-${id}`, [{ id: randomUUID(), type: 'InstanceCreated', data: { instance_id: id, account_id: 'acc_bench', name: `bench ${n}`, token_hash: `h${n}`, webhook_secret_sealed: 's', reject_calls: false, auto_read_messages: false, labels: {}, billing_status: 'TRIALING', expired_at: '2030-01-08T00:00:00.000Z' }, metadata: meta(id) }], 'any');
    await events.append(`session-${id}`, [{ id: randomUUID(), type: 'SessionConnected', data: { jid: `5511${n}@s.whatsapp.net`, phone: `5511${n}`, business: false }, metadata: meta(id) }], 'any');
  }
  let written = INSTANCES * 2;
  for (let batch = 0; written < EVENTS; batch++) {
    const id = `3EBENCH${String(batch % INSTANCES).padStart(23, '0')}`;
    const list = Array.from({ length: APPEND_BATCH }, (_, i) => sessionEvent(id, written + i));
    await events.append(`session-${id}`, list, 'any');
    written += list.length;
  }
}

/** Events per second of reading the whole log in the rebuild's chunks, doing nothing with them. */
async function readRate(events: EmbeddedEventStore): Promise<{ rate: number; count: number }> {
  const started = performance.now();
  let after = -1n;
  let count = 0;
  for (;;) {
    const batch = await events.readAll({ after, maxCount: 5_000 });
    if (batch.length === 0) break;
    after = batch[batch.length - 1]!.position;
    count += batch.length;
  }
  return { rate: count / ((performance.now() - started) / 1000), count };
}

export async function benchRebuild(): Promise<void> {
  const { AliasedDocumentStore, EmbeddedDocumentStore, EmbeddedEventStore, READ_MODELS, Rebuilder, silentProgress } = await built();
  const dir = await mkdtemp(join(tmpdir(), 'bench-rebuild-'));
  try {
    const events = await EmbeddedEventStore.open({ path: join(dir, 'events') });
    const docs = await AliasedDocumentStore.open(await EmbeddedDocumentStore.open({ path: join(dir, 'docs') }));
    try {
      await fillLog(events);
      const read = await readRate(events);
      // As `npm run rebuild` and a serving gateway run it on the embedded stores: the costliest
      // fold on a thread of its own.
      const thread = { events: join(dir, 'events'), docs: join(dir, 'docs') };
      const { stats } = await new Rebuilder(events, docs, silentProgress, { thread }).rebuild(READ_MODELS);
      const rate = stats.events / stats.seconds;
      report({
        name: `rebuild of every read model (${READ_MODELS.length}) from the embedded log, ${stats.events.toLocaleString('en-US')} events`,
        value: rate,
        unit: 'events/s',
        baseline: { name: 'reading the log alone', value: read.rate },
        target: `>= ${TARGET_PER_SECOND.toLocaleString('en-US')}/s`,
        met: rate >= TARGET_PER_SECOND,
      });
      // Where the time goes: each read model rebuilt alone, over the same log (each reads it whole).
      for (const model of READ_MODELS) {
        const alone = await new Rebuilder(events, docs, silentProgress).rebuild([model]);
        report({ name: `rebuild of ${model.name} alone`, value: alone.stats.events / alone.stats.seconds, unit: 'events/s', baseline: { name: 'reading the log alone', value: read.rate } });
      }
    } finally {
      await events.close();
      await docs.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
