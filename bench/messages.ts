import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import type { NetworkMessage } from '../src/domain/session/events.js';
import { loadConfig } from '../src/infra/config/config.js';
import { EmbeddedEventStore } from '../src/infra/eventstore/embedded/embedded-event-store.js';
import { silentProgress } from '../src/rebuild/progress.js';
import { runRebuild } from '../src/rebuild/run.js';
import { account, call } from './api.js';
import { startChild } from './child.js';
import { percentile, report } from './lib.js';

/**
 * The conversations read model (issue 30) at 100,000 messages in one instance, on the embedded
 * stores: a chat's page of 50 (the newest, and one deep in the chat by `before`) and searches,
 * one request at a time (what one client waits), against GET /health on the same gateway (the
 * HTTP stack alone); the document store's growth per text message (the log excluded). The
 * messages come from history syncs appended while the gateway is down; `npm run rebuild` then
 * builds every read model from that log (its rate is printed), and the gateway starts on them.
 */
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 100_000);
const CHATS = 20;
const RUNS = 300;
const PAGE_TARGET_MS = 20;
const SEARCH_TARGET_MS = 100;
const DISK_TARGET_BYTES = 1536;
const GATEWAY = 'dist/main.js';

const WORDS = ['delivery', 'invoice', 'payment', 'tomorrow', 'thanks', 'price', 'address', 'photo', 'schedule', 'refund'];
const chatOf = (i: number) => `55119${String(i % CHATS).padStart(8, '0')}@s.whatsapp.net`;

/** A text of a typical chat length; one message in 200 says "zebra", one in 10 "order". */
function message(i: number): NetworkMessage {
  const chat = chatOf(i);
  const words = [WORDS[i % WORDS.length], WORDS[(i * 7) % WORDS.length], i % 10 === 0 ? 'order' : 'hello', i % 200 === 0 ? 'zebra' : 'there'];
  return {
    id: `3EB0${String(i).padStart(16, '0')}`,
    chat,
    sender: chat,
    from_me: i % 3 === 0,
    is_group: false,
    push_name: 'Bench Contact',
    timestamp_s: 1_700_000_000 + i,
    type: 'text',
    text: `Message ${i}: ${words.join(' ')}, see you soon.`,
  };
}

async function seed(dataDir: string, instanceId: string, accountId: string): Promise<void> {
  const events = await EmbeddedEventStore.open({ path: join(dataDir, 'events') });
  try {
    const metadata = { instanceId, accountId, occurredAt: new Date().toISOString(), correlationId: instanceId, actor: { kind: 'network', id: 'bench' } };
    for (let i = 0; i < MESSAGES; i += 500) {
      const messages = Array.from({ length: Math.min(500, MESSAGES - i) }, (_, n) => message(i + n));
      const data = { sync_type: 'INITIAL_BOOTSTRAP', progress: Math.round(((i + 500) / MESSAGES) * 100), chats: [], messages };
      await events.append(`session-${instanceId}`, [{ id: randomUUID(), type: 'HistorySyncReceived', data, metadata }], 'any');
    }
  } finally {
    await events.close();
  }
}

async function latency(origin: string, path: string, headers: Record<string, string>) {
  const pool = new Pool(origin, { connections: 1 });
  const times: number[] = [];
  try {
    for (let i = 0; i < RUNS + 30; i++) {
      const t0 = performance.now();
      const res = await pool.request({ method: 'GET', path, headers });
      await res.body.text();
      if (res.statusCode !== 200) throw new Error(`${path} answered ${res.statusCode}`);
      if (i >= 30) times.push(performance.now() - t0);
    }
  } finally {
    await pool.close();
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99) };
}

async function bytesOnDisk(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += (await stat(join(entry.parentPath, entry.name))).blocks * 512;
  }
  return total;
}

export async function benchMessages(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'gw-bench-messages-'));
  const env = { DATA_DIR: dataDir, LOG_LEVEL: 'warn', MESSAGING_NETWORK: 'sandbox' };
  let gateway = await startChild(GATEWAY, env);
  try {
    const acc = await account(gateway.origin, 'bench@example.com');
    const id = (await acc.call('PUT', '/instances/create', { name: 'bench' })).id as string;
    await gateway.stop();
    const docsBefore = await bytesOnDisk(join(dataDir, 'docs'));
    await seed(dataDir, id, acc.accountId);
    const t0 = performance.now();
    const rebuilt = await runRebuild(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' }), [], silentProgress, () => undefined);
    const seconds = (performance.now() - t0) / 1000;
    report({ name: `messages: npm run rebuild of every read model over ${MESSAGES.toLocaleString('en-US')} messages (history syncs of 500)`, value: MESSAGES / seconds, unit: 'messages/s' });
    const documents = rebuilt.results.find((r) => r.name === 'messages')?.after.documents;
    if (documents !== MESSAGES) throw new Error(`the messages model holds ${String(documents)} documents`);
    // Every model was rebuilt, but the others hold a few dozen documents here: the growth is the messages model's.
    const perMessage = ((await bytesOnDisk(join(dataDir, 'docs'))) - docsBefore) / MESSAGES;
    report({ name: 'messages: document store growth per text message (the messages model: documents and indexes; the log excluded)', value: perMessage, unit: 'bytes', target: `< ${DISK_TARGET_BYTES} bytes`, met: perMessage < DISK_TARGET_BYTES });
    gateway = await startChild(GATEWAY, env);
    const { auth } = acc;
    const deadline = Date.now() + 300_000;
    while ((await fetch(`${gateway.origin}/ready`)).status !== 200) {
      if (Date.now() > deadline) throw new Error('the gateway did not catch up with the log');
      await new Promise((r) => setTimeout(r, 250));
    }
    const chat = chatOf(0);
    const first = await call(gateway.origin, 'GET', `/instances/${id}/chats/${chat}/messages?limit=50`, undefined, auth);
    if ((first.data as { messages: unknown[] }).messages.length !== 50) throw new Error('the chat page is not full');
    const deep = message(Math.floor(MESSAGES / 2 / CHATS) * CHATS).id;
    const health = await latency(gateway.origin, '/health', {});
    const baseline = { name: 'GET /health, same gateway', value: health.p99 };
    const cases: [string, string, number][] = [
      [`chat page of 50, newest (${(MESSAGES / CHATS).toLocaleString('en-US')} messages in the chat)`, `/instances/${id}/chats/${chat}/messages?limit=50`, PAGE_TARGET_MS],
      ['chat page of 50, by `before` halfway back', `/instances/${id}/chats/${chat}/messages?limit=50&before=${deep}`, PAGE_TARGET_MS],
      [`search of a word in 1 message of 200 (${MESSAGES / 200} matches)`, `/instances/${id}/messages/search?q=zebra&limit=50`, SEARCH_TARGET_MS],
      ['search of two words, one in 1 of 200 and one in 1 of 10', `/instances/${id}/messages/search?q=zebra+order&limit=50`, SEARCH_TARGET_MS],
      [`search of a word in 1 message of 10 (${MESSAGES / 10} matches)`, `/instances/${id}/messages/search?q=order&limit=50`, SEARCH_TARGET_MS],
      ['search within one chat', `/instances/${id}/messages/search?q=zebra&chat=${chat}&limit=50`, SEARCH_TARGET_MS],
    ];
    for (const [name, path, target] of cases) {
      const m = await latency(gateway.origin, path, auth);
      report({
        name: `messages: ${name}, ${MESSAGES.toLocaleString('en-US')} messages in the instance, latency p99 (one client; p50 ${m.p50.toFixed(2)} ms)`,
        value: m.p99,
        unit: 'ms p99',
        baseline,
        target: `< ${target} ms`,
        met: m.p99 < target,
      });
    }
  } finally {
    await gateway.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchMessages();
