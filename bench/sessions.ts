import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { account, compareAuthenticatedGet, type Json } from './api.js';
import { startChild, UNTHROTTLED } from './child.js';
import { report } from './lib.js';

/**
 * Sessions: (a) memory per idle connected sandbox session with 1,000 of them in one gateway
 * process, above that process's own baseline; (b) GET /instances/{id}/session/status throughput
 * against a bare Koa handler answering the same JSON.
 *
 * (a) runs in a child process of its own started with --expose-gc, so the heap of whatever ran
 * before (other suites under `npm run bench`) does not count, and `npx tsx bench/sessions.ts`
 * works without flags.
 */
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 1000);
const CONCURRENCY = 25;
const MEMORY_TARGET_BYTES = 200 * 1024;
const DURATION_MS = Number(process.env.BENCH_HTTP_MS ?? 8000);
const ROUNDS = 8;
const HERE = fileURLToPath(import.meta.url);
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const MEMORY_CHILD = 'BENCH_SESSIONS_MEMORY_CHILD';

type Account = Awaited<ReturnType<typeof account>>;

/** Creates an instance and a phone, pairs them by QR, and answers the instance. */
async function pairedInstance(acc: Account, phone: string): Promise<{ id: string; token: string }> {
  const instance = await acc.call('PUT', '/instances/create', { name: `bench ${phone}` });
  await acc.call('POST', '/sandbox/phones', { phone, push_name: `Bench ${phone}` });
  const id = instance.id as string;
  const qr = (await acc.call('GET', `/instances/${id}/session/qr`)).data as Json;
  await acc.call('POST', `/sandbox/phones/${phone}/scan`, { qr: qr.qr });
  return { id, token: instance.token as string };
}

async function untilConnected(acc: Account, id: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const status = (await acc.call('GET', `/instances/${id}/session/status`)).data as Json;
    if (status.connected === true) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`instance ${id} did not connect`);
}

async function inBatches<T>(items: T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < items.length) await work(items[next++] as T);
    }),
  );
}

const phoneOf = (i: number) => `55119${String(i).padStart(8, '0')}`;

interface MemorySample {
  heap: number;
  rss: number;
}

function sample(): MemorySample {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc');
  for (let i = 0; i < 4; i++) gc();
  const m = process.memoryUsage();
  // arrayBuffers is part of external already.
  return { heap: m.heapUsed + m.external, rss: m.rss };
}

/**
 * The child's side of (a): a sandbox gateway in this process. The baseline is taken once the
 * 1,000 instances and phones exist (their read models and caches are not the sessions' cost),
 * then every instance is paired and left idle.
 */
async function measureMemoryInProcess(): Promise<void> {
  const { startGateway } = await import('../src/composition-root.js');
  const { loadConfig } = await import('../src/infra/config/config.js');
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-sessions-'));
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'silent', SCRYPT_LOG_N: '10', MESSAGING_NETWORK: 'sandbox', ...UNTHROTTLED });
  const gateway = await startGateway(config);
  try {
    const acc = await account(gateway.url, 'memory@example.com');
    const empty = sample();
    const instances: { id: string; phone: string }[] = [];
    const indexes = Array.from({ length: SESSIONS }, (_, i) => i);
    await inBatches(indexes, async (i) => {
      const instance = await acc.call('PUT', '/instances/create', { name: `bench ${i}` });
      await acc.call('POST', '/sandbox/phones', { phone: phoneOf(i), push_name: `Bench ${i}` });
      instances.push({ id: instance.id as string, phone: phoneOf(i) });
    });
    await new Promise((r) => setTimeout(r, 500));
    const baseline = sample();
    await inBatches(instances, async ({ id, phone }) => {
      const qr = (await acc.call('GET', `/instances/${id}/session/qr`)).data as Json;
      await acc.call('POST', `/sandbox/phones/${phone}/scan`, { qr: qr.qr });
    });
    await inBatches(instances, ({ id }) => untilConnected(acc, id));
    // Idle: let projections and timers settle before the measurement.
    await new Promise((r) => setTimeout(r, 1000));
    const connected = sample();
    process.stdout.write(`${JSON.stringify({ sessions: instances.length, empty, baseline, connected })}\n`);
  } finally {
    await gateway.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function benchMemory(): Promise<void> {
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', HERE], {
    cwd: ROOT,
    env: { ...process.env, [MEMORY_CHILD]: '1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`memory child exited with ${code}`);
  const line = out.trim().split('\n').at(-1) ?? '';
  const { sessions, empty, baseline, connected } = JSON.parse(line) as { sessions: number; empty: MemorySample; baseline: MemorySample; connected: MemorySample };
  const perHeap = (connected.heap - baseline.heap) / sessions;
  const perRss = (connected.rss - baseline.rss) / sessions;
  const kb = (n: number) => n / 1024;
  report({ name: `sessions process baseline (gateway up, ${sessions} instances and phones, no session), heap+external`, value: kb(baseline.heap), unit: 'KB' });
  report({ name: 'sessions process at start (no instances), heap+external', value: kb(empty.heap), unit: 'KB' });
  report({
    name: `sessions memory per idle connected sandbox session at ${sessions}, heap+external above baseline`,
    value: kb(perHeap),
    unit: 'KB',
    target: `< ${MEMORY_TARGET_BYTES / 1024} KB`,
    met: perHeap < MEMORY_TARGET_BYTES,
  });
  report({
    name: `sessions memory per idle connected sandbox session at ${sessions}, RSS above baseline`,
    value: kb(perRss),
    unit: 'KB',
    target: `< ${MEMORY_TARGET_BYTES / 1024} KB`,
    met: perRss < MEMORY_TARGET_BYTES,
  });
}

/** (b): the built gateway (dist/main.js, as `npm start` runs it) with one connected sandbox instance. */
async function benchStatus(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'gw-bench-status-'));
  const gateway = await startChild('dist/main.js', { DATA_DIR: dataDir, LOG_LEVEL: 'warn', MESSAGING_NETWORK: 'sandbox' });
  try {
    const o = gateway.origin;
    const acc = await account(o, 'status@example.com');
    const instance = await pairedInstance(acc, phoneOf(1));
    await untilConnected(acc, instance.id);
    await compareAuthenticatedGet({
      origin: o,
      path: `/instances/${instance.id}/session/status`,
      what: '/instances/{id}/session/status (connected)',
      jwt: acc.auth,
      pair: { 'x-instance-token': instance.token, 'x-client-token': acc.clientToken },
      durationMs: DURATION_MS,
      rounds: ROUNDS,
    });
  } finally {
    await gateway.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

export async function benchSessions(): Promise<void> {
  await benchMemory();
  await benchStatus();
}

const invokedDirectly = process.argv[1] !== undefined && resolve(process.argv[1]) === HERE;
if (invokedDirectly) {
  // `memory` or `status` runs one half.
  const only = process.argv[2];
  if (process.env[MEMORY_CHILD] === '1') await measureMemoryInProcess();
  else if (only === 'memory') await benchMemory();
  else if (only === 'status') await benchStatus();
  else await benchSessions();
}
