import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { account, pairedSandboxInstance } from './api.js';
import { freePort, startChild, type Child } from './child.js';
import { ChildProfiler } from './profiler.js';
import { percentile, report } from './lib.js';
import { stageTable, workSnapshot } from './stages.js';

/**
 * The front door, end to end, as a user sees it (issue 31): a sandbox phone sends over HTTP
 * (POST /sandbox/phones/{phone}/messages), the gateway records the session event, projects it and
 * delivers the Message webhook to a receiver. Three processes besides this one: the gateway
 * (dist/main.js, as `npm start`), the driver (this file, BENCH_INGEST_ROLE=driver) and the
 * receiver (bench/webhooks.ts's), so no load generator steals the gateway's event loop.
 *
 * BENCH_INGEST_CPU_PROF=<dir> runs the gateway with --cpu-prof into <dir> (read it with Chrome's
 * profiler or `node scripts/...`); the figures of that run carry the profiler's overhead.
 */
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const INSTANCES = Number(process.env.BENCH_INGEST_INSTANCES ?? 20);
const BURST = Number(process.env.BENCH_INGEST_BURST ?? 3000);
const IN_FLIGHT = 50;
const PACED_RATE = 500;
const PACED_MS = Number(process.env.BENCH_INGEST_PACED_MS ?? 5000);

const epochNow = () => performance.timeOrigin + performance.now();

interface DriverPlan {
  origin: string;
  auth: string;
  /** [sender phone, instance phone] per instance. */
  pairs: [string, string][];
  mode: 'burst' | 'paced' | 'baseline';
  count: number;
  rate?: number;
  /** For the baseline: the receiver's URL, POSTed a Message-sized body directly. */
  target?: string;
}

interface DriverResult {
  sent: number;
  ms: number;
  /** Send calls' own round trips (ms), to tell HTTP-in time from projection/delivery time. */
  calls: number[];
}

/** The driver process: sends `count` messages, `IN_FLIGHT` at once or paced, and says when done. */
async function runDriver(): Promise<void> {
  const plan = JSON.parse(process.env.BENCH_INGEST_PLAN ?? '{}') as DriverPlan;
  const base = plan.mode === 'baseline' ? (plan.target as string) : plan.origin;
  const url = new URL(base);
  const pool = new Pool(url.origin, { connections: IN_FLIGHT, pipelining: 1 });
  const calls: number[] = [];
  const sendOne = async (i: number) => {
    const [from, to] = plan.pairs[i % plan.pairs.length] as [string, string];
    const text = `t=${epochNow()}`;
    const t0 = performance.now();
    const body =
      plan.mode === 'baseline'
        ? JSON.stringify({ type: 'Message', event: { Info: { ID: `b${i}`, Chat: `${from}@s.whatsapp.net` }, Message: { conversation: text } } })
        : JSON.stringify({ to, text });
    const res = await pool.request({
      method: 'POST',
      path: plan.mode === 'baseline' ? url.pathname : `/sandbox/phones/${from}/messages`,
      headers: { 'content-type': 'application/json', authorization: plan.auth },
      body,
    });
    const answer = await res.body.text();
    if (res.statusCode >= 300) throw new Error(`send ${i}: ${res.statusCode} ${answer}`);
    calls.push(performance.now() - t0);
  };
  const started = performance.now();
  if (plan.mode === 'paced') {
    const gap = 1000 / (plan.rate as number);
    const pending: Promise<void>[] = [];
    for (let i = 0; i < plan.count; i++) {
      const wait = started + i * gap - performance.now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      pending.push(sendOne(i));
    }
    await Promise.all(pending);
  } else {
    let next = 0;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < plan.count) await sendOne(next++);
      }),
    );
  }
  const result: DriverResult = { sent: plan.count, ms: performance.now() - started, calls };
  await pool.close();
  process.stdout.write(JSON.stringify(result));
}

/** Runs the driver in its own process; resolves when it has sent everything. */
function drive(plan: DriverPlan): Promise<DriverResult> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', 'bench/ingest.ts'], {
      cwd: ROOT,
      env: { ...process.env, BENCH_INGEST_ROLE: 'driver', BENCH_INGEST_PLAN: JSON.stringify(plan) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    proc.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    proc.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as DriverResult) : reject(new Error(`driver exited ${code}`))));
  });
}

interface ReceiverStats {
  count: number;
  latencies: number[];
}

async function receiverStats(origin: string): Promise<ReceiverStats> {
  return (await (await fetch(`${origin}/stats`)).json()) as ReceiverStats;
}

/** Waits until the receiver counted `expected` POSTs since its counters were reset; the time it happened. */
async function delivered(origin: string, expected: number): Promise<number> {
  const deadline = Date.now() + 180_000;
  for (;;) {
    const { count } = (await (await fetch(`${origin}/count`)).json()) as { count: number };
    if (count >= expected) return performance.now();
    if (Date.now() > deadline) throw new Error(`only ${count} of ${expected} webhooks arrived within 180 s`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function setUp(gateway: Child, receiver: Child) {
  const acc = await account(gateway.origin, 'ingest@example.com');
  const pairs: [string, string][] = [];
  for (let i = 0; i < INSTANCES; i++) {
    const own = `55119${String(1000000 + i).padStart(7, '0')}`;
    const sender = `55219${String(1000000 + i).padStart(7, '0')}`;
    const instance = await pairedSandboxInstance(acc, own);
    await acc.call('POST', '/sandbox/phones', { phone: sender, push_name: `Sender ${i}` });
    // Only Message: the receiver counts every POST, and each send is one Message.
    await fetch(`${gateway.origin}/instances/${instance.id}/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...acc.auth },
      body: JSON.stringify({ webhookURL: `${receiver.origin}/hook`, events: 'Message' }),
    }).then(async (r) => {
      if (r.status >= 300) throw new Error(`webhook: ${r.status} ${await r.text()}`);
    });
    pairs.push([sender, own]);
  }
  return { auth: acc.auth.authorization, pairs };
}

export async function benchIngest(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'gw-bench-ingest-'));
  // A directory: the gateway's CPU profile of the burst is written there (bench/profiler.ts).
  const prof = process.env.BENCH_INGEST_CPU_PROF;
  const inspectPort = prof ? await freePort() : null;
  const receiver = await startChild('bench/webhooks.ts', { BENCH_WEBHOOK_ROLE: 'receiver' });
  // /metrics on a port of its own: the bench reads where the gateway's CPU went (bench/stages.ts).
  const metricsPort = await freePort();
  const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  const gateway = await startChild('dist/main.js', {
    DATA_DIR: dataDir,
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
    MESSAGING_NETWORK: 'sandbox',
    ALLOW_PRIVATE_TARGETS: 'true',
    METRICS_PORT: String(metricsPort),
    ...(inspectPort ? { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} ${ChildProfiler.option(inspectPort)}` } : {}),
  });
  const profiler = inspectPort ? new ChildProfiler(inspectPort) : null;
  try {
    const { auth, pairs } = await setUp(gateway, receiver);
    const plan = { origin: gateway.origin, auth, pairs };

    // Warm-up: JIT, connection pools, first documents of every chat.
    await receiverStats(receiver.origin);
    await drive({ ...plan, mode: 'burst', count: 400 });
    await delivered(receiver.origin, 400);

    // Baseline: the same driver POSTing Message-sized bodies straight to the receiver.
    await receiverStats(receiver.origin);
    const bare = await drive({ ...plan, mode: 'baseline', count: BURST, target: `${receiver.origin}/hook` });
    const bareRate = BURST / (bare.ms / 1000);

    await receiverStats(receiver.origin);
    const work0 = await workSnapshot(metricsUrl, gateway);
    await profiler?.start();
    const cpu0 = gateway.cpuSeconds();
    const t0 = performance.now();
    const burst = await drive({ ...plan, mode: 'burst', count: BURST });
    const done = await delivered(receiver.origin, BURST);
    const cpu1 = gateway.cpuSeconds();
    const work1 = await workSnapshot(metricsUrl, gateway);
    if (profiler && prof) console.log(`ingest   burst profile: ${await profiler.stop(prof, 'ingest-burst')}`);
    const rate = BURST / ((done - t0) / 1000);
    // The driver's process start is inside t0..done: it is subtracted with what the driver measured itself.
    const sendRate = BURST / (burst.ms / 1000);
    report({
      name: `ingest burst ${BURST} msgs, ${IN_FLIGHT} in flight, phone HTTP -> webhook delivered`,
      value: rate,
      unit: 'msg/s',
      baseline: { name: 'same driver POSTing straight to the receiver', value: bareRate },
      target: '>= 1000 msg/s',
      met: rate >= 1000,
    });
    const calls = burst.calls.sort((a, b) => a - b);
    report({ name: `ingest   sends accepted (HTTP 201) rate`, value: sendRate, unit: 'msg/s' });
    report({ name: `ingest   send call p50 / p99`, value: percentile(calls, 50), unit: `ms / ${percentile(calls, 99).toFixed(1)} ms` });
    if (cpu0 !== null && cpu1 !== null) report({ name: 'ingest   gateway CPU per message (burst)', value: ((cpu1 - cpu0) * 1e6) / BURST, unit: 'µs' });
    for (const line of stageTable(work0, work1, BURST)) console.log(`ingest   ${line}`);

    await receiverStats(receiver.origin);
    const count = Math.round((PACED_RATE * PACED_MS) / 1000);
    const c0 = gateway.cpuSeconds();
    await drive({ ...plan, mode: 'paced', count, rate: PACED_RATE });
    await delivered(receiver.origin, count);
    const c1 = gateway.cpuSeconds();
    const latencies = (await receiverStats(receiver.origin)).latencies.sort((a, b) => a - b);
    report({ name: `ingest ${PACED_RATE}/s over ${INSTANCES} instances, phone send -> receiver has it, p50`, value: percentile(latencies, 50), unit: 'ms' });
    const p99 = percentile(latencies, 99);
    report({ name: `ingest ${PACED_RATE}/s over ${INSTANCES} instances p99 (${latencies.length} msgs)`, value: p99, unit: 'ms', target: '< 50 ms', met: p99 < 50 });
    if (c0 !== null && c1 !== null) report({ name: 'ingest   gateway CPU per message (paced)', value: ((c1 - c0) * 1e6) / count, unit: 'µs' });
  } finally {
    await gateway.stop();
    await receiver.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

if (process.env.BENCH_INGEST_ROLE === 'driver') await runDriver();
else if (import.meta.url === `file://${process.argv[1]}`) await benchIngest();
