import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { EmbeddedEventStore } from '../src/infra/eventstore/embedded/embedded-event-store.js';
import type { EventData } from '../src/infra/eventstore/port.js';
import { report } from './lib.js';

/**
 * The rebuild as `npm run rebuild` runs it: the built JavaScript, in a node process given the
 * rebuild's V8 settings (src/rebuild/node-flags.ts), which bench/rebuild-child.mjs measures in.
 * Run through `npm run bench` only, which builds first (run alone, it would time whatever dist
 * held). From the TypeScript sources, its worker thread compiled them all again through tsx, a
 * tenth of the rebuild that no user pays.
 */
const load = <T>(path: string): Promise<T> => import(pathToFileURL(resolve(fileURLToPath(import.meta.url), '../../dist', path)).href) as Promise<T>;

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

type FromChild = { read: number } | { all: { events: number; seconds: number } } | { alone: { name: string; events: number; seconds: number } };

/** Runs bench/rebuild-child.mjs on the filled log in a process with these node flags; its measurements. */
async function measureInChild(dir: string, flags: readonly string[]): Promise<FromChild[]> {
  const child = spawn(process.execPath, [...flags, fileURLToPath(new URL('./rebuild-child.mjs', import.meta.url)), dir], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`rebuild bench child exited with ${code}`);
  return out
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as FromChild);
}

export async function benchRebuild(): Promise<void> {
  const { EmbeddedEventStore } = await load<typeof import('../src/infra/eventstore/embedded/embedded-event-store.js')>('infra/eventstore/embedded/embedded-event-store.js');
  const { READ_MODELS } = await load<typeof import('../src/rebuild/read-models.js')>('rebuild/read-models.js');
  const { rebuildNodeFlags } = await load<typeof import('../src/rebuild/node-flags.js')>('rebuild/node-flags.js');
  const dir = await mkdtemp(join(tmpdir(), 'bench-rebuild-'));
  try {
    const events = await EmbeddedEventStore.open({ path: join(dir, 'events') });
    try {
      await fillLog(events);
    } finally {
      await events.close();
    }
    const flags = rebuildNodeFlags();
    const measured = await measureInChild(dir, flags);
    const read = (measured.find((m) => 'read' in m) as { read: number }).read;
    const baseline = { name: 'reading the log alone', value: read };
    const all = (measured.find((m) => 'all' in m) as { all: { events: number; seconds: number } }).all;
    const rate = all.events / all.seconds;
    const how = flags.length > 0 ? `node ${flags.join(' ')}` : 'node';
    report({
      name: `rebuild of every read model (${READ_MODELS.length}) from the embedded log, ${all.events.toLocaleString('en-US')} events, as npm run rebuild runs it (${how})`,
      value: rate,
      unit: 'events/s',
      baseline,
      target: `>= ${TARGET_PER_SECOND.toLocaleString('en-US')}/s`,
      met: rate >= TARGET_PER_SECOND,
    });
    for (const m of measured) {
      if (!('alone' in m)) continue;
      report({ name: `rebuild of ${m.alone.name} alone`, value: m.alone.events / m.alone.seconds, unit: 'events/s', baseline });
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
