import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import type { NetworkMessage } from '../src/domain/session/events.js';
import { EmbeddedEventStore } from '../src/infra/eventstore/embedded/embedded-event-store.js';
import { account, call } from './api.js';
import { startChild, type Child } from './child.js';
import { percentile, report } from './lib.js';
import { load } from './load.js';

/**
 * GET /instances/{id}/chats on an instance with 10,000 chats: page 1 and the last page. Latency
 * is measured one request at a time (what one client waits); throughput under 50 connections,
 * against a bare Koa handler answering the same JSON. The chats come from a history sync appended
 * to the instance's session stream while the gateway is down, so the read model is built the way
 * production builds it: by the projection, on start.
 */
const CHATS = 10_000;
const PAGE_SIZE = 50;
const DURATION_MS = Number(process.env.BENCH_HTTP_MS ?? 3000);
const LATENCY_RUNS = 500;
const TARGET_P99_MS = 20;
/** Built JavaScript, as `npm start` runs it (`npm run bench` builds first). */
const GATEWAY = 'dist/main.js';

/** 10,000 chats, every 100th pinned, each with one message from its peer, in history chunks. */
async function seedHistory(dataDir: string, instanceId: string, accountId: string): Promise<void> {
  const events = await EmbeddedEventStore.open({ path: join(dataDir, 'events') });
  try {
    const base = 1_700_000_000;
    const chats = Array.from({ length: CHATS }, (_, i) => {
      const jid = `55119${String(i).padStart(8, '0')}@s.whatsapp.net`;
      return { jid, name: `Contact ${i}`, unread_count: i % 7, pinned: i % 100 === 0, last_message_s: base + i };
    });
    const messages: NetworkMessage[] = chats.map((c, i) => ({
      id: `3EB0${String(i).padStart(16, '0')}`,
      chat: c.jid,
      sender: c.jid,
      from_me: false,
      is_group: false,
      push_name: c.name,
      timestamp_s: c.last_message_s,
      type: 'text',
      text: `message ${i}`,
    }));
    const metadata = { instanceId, accountId, occurredAt: new Date().toISOString(), correlationId: instanceId, actor: { kind: 'network', id: 'bench' } };
    for (let i = 0; i < CHATS; i += 500) {
      const data = { sync_type: 'INITIAL_BOOTSTRAP', progress: Math.round(((i + 500) / CHATS) * 100), chats: chats.slice(i, i + 500), messages: messages.slice(i, i + 500) };
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
    for (let i = 0; i < LATENCY_RUNS + 50; i++) {
      const t0 = performance.now();
      const res = await pool.request({ method: 'GET', path, headers });
      await res.body.text();
      if (res.statusCode !== 200) throw new Error(`${path} answered ${res.statusCode}`);
      if (i >= 50) times.push(performance.now() - t0);
    }
  } finally {
    await pool.close();
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99) };
}

async function ready(gateway: Child, path: string, auth: Record<string, string>): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const page = await call(gateway.origin, 'GET', path, undefined, auth);
    if (page.total === CHATS) return;
    if (Date.now() > deadline) throw new Error(`the chat list did not reach ${CHATS} chats (has ${String(page.total)})`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

export async function benchChats(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'gw-bench-chats-'));
  const env = { DATA_DIR: dataDir, LOG_LEVEL: 'warn', MESSAGING_NETWORK: 'sandbox' };
  let gateway = await startChild(GATEWAY, env);
  let bare: Child | undefined;
  try {
    const acc = await account(gateway.origin, 'bench@example.com');
    const id = (await acc.call('PUT', '/instances/create', { name: 'bench' })).id as string;
    await gateway.stop();
    await seedHistory(dataDir, id, acc.accountId);
    gateway = await startChild(GATEWAY, env);
    const { auth } = acc;
    const lastPage = Math.ceil(CHATS / PAGE_SIZE);
    await ready(gateway, `/instances/${id}/chats?page_size=1`, auth);

    for (const page of [1, lastPage]) {
      const path = `/instances/${id}/chats?page=${page}&page_size=${PAGE_SIZE}`;
      const answer = await call(gateway.origin, 'GET', path, undefined, auth);
      if ((answer.content as unknown[]).length !== PAGE_SIZE) throw new Error(`page ${page} is not full`);
      bare = await startChild('bench/fixtures/bare-koa.ts', { BENCH_BODY: JSON.stringify(answer) });
      const barePath = `/instances/${id}`;
      await load(bare.origin, barePath, {}, 500);
      await load(gateway.origin, path, auth, 500);
      const single = await latency(gateway.origin, path, auth);
      const base = await load(bare.origin, barePath, {}, DURATION_MS);
      const gw = await load(gateway.origin, path, auth, DURATION_MS);
      if (base.errors + gw.errors > 0) throw new Error(`errors during load: ${gw.errors} ${base.errors}`);
      await bare.stop();
      bare = undefined;
      const name = `chats GET page ${page} of ${lastPage} (${CHATS.toLocaleString('en-US')} chats, page_size ${PAGE_SIZE})`;
      report({
        name: `${name} latency p99 (one client)`,
        value: single.p99,
        unit: `ms p99, ${single.p50.toFixed(2)} ms p50`,
        target: `< ${TARGET_P99_MS} ms`,
        met: single.p99 < TARGET_P99_MS,
      });
      report({ name: `${name} latency under 50 connections p50/p99`, value: gw.p50ms, unit: `ms p50, ${gw.p99ms.toFixed(2)} ms p99` });
      report({ name: `${name} throughput`, value: gw.perSecond, unit: 'req/s', baseline: { name: 'bare Koa, same JSON', value: base.perSecond } });
    }
  } finally {
    await bare?.stop();
    await gateway.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchChats();
