import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { account, type Json } from './api.js';
import { freePort, startChild, type Child } from './child.js';
import { ChildProfiler } from './profiler.js';
import { report } from './lib.js';

/**
 * Many nodes (issue 34): webhook events per second end to end (a phone's message through any node,
 * forwarded to the node holding the session, recorded, projected, delivered by the node feeding the
 * instance's lane, answered by the receiver) with one, two and three gateway nodes on the
 * EventStoreDB and MongoDB test servers, and each node's CPU seconds per event.
 *
 * On a 2-core machine every node, the stores and the load share the same cores, so events/s cannot
 * grow with the nodes; CPU per event per node shows the work spreading (each node spends about
 * 1/N of the whole per event), which is what more machines would turn into throughput.
 */
const INSTANCES = Number(process.env.BENCH_CLUSTER_INSTANCES ?? 12);
const DURATION_MS = Number(process.env.BENCH_CLUSTER_MS ?? 8000);
const SENDERS = Number(process.env.BENCH_CLUSTER_SENDERS ?? 16);
const NODES = (process.env.BENCH_CLUSTER_NODES ?? '1,2,3').split(',').map(Number);
const TTL_MS = 6000;
const IDLE_MS = 3000;
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const METRICS_TOKEN = randomBytes(16).toString('hex');

interface Stores {
  eventstore: string;
  mongodb: string;
  cpuSeconds(): number | null;
  /** Clears the MongoDB server's tally of commands (by name and collection). */
  clearTally(): void;
  /** The commands the MongoDB server ran since the tally was cleared. */
  tally(): Promise<Record<string, number>>;
  stop(): Promise<void>;
}

/** The test servers in their own process (bench/fixtures/test-servers.ts), fresh for each round. */
async function startStores(): Promise<Stores> {
  const proc: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'bench/fixtures/test-servers.ts'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: proc.stdout! });
  const [line] = (await once(lines, 'line')) as [string];
  const urls = JSON.parse(line) as { eventstore: string; mongodb: string };
  return {
    ...urls,
    cpuSeconds: () => cpuOf(proc.pid),
    clearTally: () => proc.kill('SIGUSR1'),
    async tally() {
      const next = once(lines, 'line');
      proc.kill('SIGUSR2');
      const [json] = (await next) as [string];
      return JSON.parse(json) as Record<string, number>;
    },
    async stop() {
      if (proc.exitCode !== null) return;
      proc.kill('SIGTERM');
      await once(proc, 'exit');
    },
  };
}

function cpuOf(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

/** A node of one deployment: its own data dir holding the deployment's keys. */
async function startNode(stores: Stores, keys: { server: string; jwt: string }, dirs: string[], inspectPort: number | null, index: number): Promise<Child> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-node-'));
  dirs.push(dir);
  await writeFile(join(dir, 'server.key'), keys.server, { mode: 0o600 });
  await writeFile(join(dir, 'jwt.key'), keys.jwt, { mode: 0o600 });
  return startChild('dist/main.js', {
    DATA_DIR: dir,
    EVENTSTORE_URL: stores.eventstore,
    // Named, so the MongoDB test server tallies each node's commands apart.
    MONGODB_URL: `${stores.mongodb}${stores.mongodb.includes('?') ? '&' : '?'}appName=node${index + 1}`,
    MESSAGING_NETWORK: 'sandbox',
    LEASE_TTL_MS: String(TTL_MS),
    LOG_LEVEL: 'warn',
    ALLOW_PRIVATE_TARGETS: 'true',
    METRICS_TOKEN,
    READ_YOUR_WRITES_TIMEOUT_MS: '10000',
    ...(inspectPort ? { NODE_OPTIONS: ChildProfiler.option(inspectPort) } : {}),
  });
}

interface ClusterView {
  nodes: { node_id: string; sessions: number; lanes: number }[];
}

async function clusterView(origin: string): Promise<ClusterView> {
  const res = await request(`${origin}/cluster`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  return (await res.body.json()) as ClusterView;
}

/** Until every node holds its share of sessions and lanes (ceil(total/nodes) + 1 at most), all of them held. */
async function balanced(origin: string, nodes: number): Promise<ClusterView> {
  const cap = Math.ceil(INSTANCES / nodes) + 1;
  const deadline = Date.now() + 120_000;
  for (;;) {
    const view = await clusterView(origin);
    const sessions = view.nodes.reduce((s, n) => s + n.sessions, 0);
    const lanes = view.nodes.reduce((s, n) => s + n.lanes, 0);
    if (view.nodes.length === nodes && sessions === INSTANCES && lanes === INSTANCES && view.nodes.every((n) => n.sessions <= cap && n.lanes <= cap)) return view;
    if (Date.now() > deadline) throw new Error(`not balanced over ${nodes} nodes: ${JSON.stringify(view)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Deliveries answered since the counters were last reset (duplicates included). */
async function receiverCount(origin: string): Promise<number> {
  const res = await request(`${origin}/count`);
  return ((await res.body.json()) as { count: number }).count;
}

/** The counters (distinct delivery ids among them), reset by reading them. */
async function receiverStats(origin: string): Promise<{ count: number; unique: number }> {
  const res = await request(`${origin}/stats`);
  return (await res.body.json()) as { count: number; unique: number };
}

async function round(nodeCount: number, receiver: Child): Promise<void> {
  const stores = await startStores();
  const dirs: string[] = [];
  const nodes: Child[] = [];
  try {
    const keys = { server: randomBytes(32).toString('base64'), jwt: randomBytes(32).toString('base64') };
    // A directory: each node's CPU profile of the measured load is written there (bench/profiler.ts).
    const prof = process.env.BENCH_CLUSTER_CPU_PROF;
    const profilers: ChildProfiler[] = [];
    for (let i = 0; i < nodeCount; i++) {
      const inspectPort = prof ? await freePort() : null;
      if (inspectPort) profilers.push(new ChildProfiler(inspectPort));
      nodes.push(await startNode(stores, keys, dirs, inspectPort, i));
    }
    const first = nodes[0]!;
    const acc = await account(first.origin, `cluster-${nodeCount}-${Date.now()}@bench.example`);
    const contact = `5511800${String(nodeCount).padStart(6, '0')}`;
    await acc.call('POST', '/sandbox/phones', { phone: contact, push_name: 'Contact' });
    const phones: string[] = [];
    for (let i = 0; i < INSTANCES; i++) {
      // Created and paired through the nodes in turn: any node forwards to the one showing the QR.
      const via = nodes[i % nodes.length]!.origin;
      const call = (method: string, path: string, body?: unknown) =>
        fetch(via + path, { method, headers: { 'content-type': 'application/json', ...acc.auth }, body: body === undefined ? undefined : JSON.stringify(body) }).then(async (r) => {
          const answer = (await r.json()) as Json;
          if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(answer)}`);
          return answer;
        });
      const phone = `5511900${String(nodeCount).padStart(2, '0')}${String(i).padStart(4, '0')}`;
      const instance = await call('PUT', '/instances/create', { name: `bench ${i}`, webhook: `${receiver.origin}/hook`, events_subscribe: ['Message'] });
      await call('POST', '/sandbox/phones', { phone, push_name: `Bench ${i}` });
      for (let tries = 0; ; tries++) {
        try {
          const qr = (await call('GET', `/instances/${instance.id as string}/session/qr`)).data as Json;
          await call('POST', `/sandbox/phones/${phone}/scan`, { qr: qr.qr });
          break;
        } catch (err) {
          if (tries >= 5) throw err;
          await new Promise((r) => setTimeout(r, 500));
        }
      }
      phones.push(phone);
    }
    const view = await balanced(first.origin, nodeCount);
    await receiverStats(receiver.origin);
    // What each node spends with no message flowing (lease renewals, polls, sweeps), per second:
    // on a busy machine few events pass, and per event that time would look like work they cause.
    const idleBefore = nodes.map((n) => n.cpuSeconds() ?? 0);
    const idleStarted = performance.now();
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const idleSeconds = (performance.now() - idleStarted) / 1000;
    const idlePerSecond = nodes.map((n, i) => ((n.cpuSeconds() ?? 0) - idleBefore[i]!) / idleSeconds);

    // Closed loop: SENDERS at a time, each through the next node, for DURATION_MS.
    const agent = new Agent({ connections: SENDERS, keepAliveTimeout: 30_000 });
    for (const profiler of profilers) await profiler.start();
    stores.clearTally();
    const cpuBefore = nodes.map((n) => n.cpuSeconds() ?? 0);
    const storesBefore = stores.cpuSeconds() ?? 0;
    const load = loadavg()[0]!;
    const started = performance.now();
    const end = started + DURATION_MS;
    let sent = 0;
    let refused = 0;
    let n = 0;
    await Promise.all(
      Array.from({ length: SENDERS }, async () => {
        while (performance.now() < end) {
          const k = n++;
          const res = await request(`${nodes[k % nodes.length]!.origin}/sandbox/phones/${contact}/messages`, {
            method: 'POST',
            dispatcher: agent,
            headers: { 'content-type': 'application/json', ...acc.auth },
            body: JSON.stringify({ to: phones[k % phones.length], text: `m${k}` }),
          });
          await res.body.dump();
          if (res.statusCode === 201) sent++;
          else refused++;
        }
      }),
    );
    // Delivered: every accepted message at the receiver (its counters were reset above).
    const deadline = Date.now() + 120_000;
    while ((await receiverCount(receiver.origin)) < sent && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const seconds = (performance.now() - started) / 1000;
    const got = await receiverStats(receiver.origin);
    const cpu = nodes.map((node, i) => (node.cpuSeconds() ?? 0) - cpuBefore[i]!);
    const storesCpu = (stores.cpuSeconds() ?? 0) - storesBefore;
    const counted = await stores.tally();
    for (const [i, profiler] of profilers.entries()) console.log(`cluster ${nodeCount} nodes, node ${i + 1} profile: ${await profiler.stop(prof as string, `cluster-${nodeCount}-node-${i + 1}`)}`);
    await agent.close();
    report({
      name: `cluster webhooks end to end, ${nodeCount} node${nodeCount > 1 ? 's' : ''} (${INSTANCES} instances, ${sent} sent, ${got.unique} delivered, ${sent - Math.min(sent, got.unique)} lost, ${got.count - got.unique} repeated, ${refused} refused; load ${load.toFixed(2)})`,
      value: got.unique / seconds,
      unit: 'events/s',
    });
    const shares = view.nodes.map((v) => `${v.sessions}/${v.lanes}`).join(', ');
    report({ name: `cluster CPU per event, ${nodeCount} node${nodeCount > 1 ? 's' : ''}, all nodes together (sessions/lanes per node: ${shares})`, value: (cpu.reduce((a, b) => a + b, 0) * 1000) / Math.max(1, got.unique), unit: 'ms' });
    cpu.forEach((c, i) =>
      report({
        name: `cluster CPU per event, ${nodeCount} node${nodeCount > 1 ? 's' : ''}, node ${i + 1} (idle: ${(idlePerSecond[i]! * 1000).toFixed(0)} ms CPU/s; net of idle: ${(((c - idlePerSecond[i]! * seconds) * 1000) / Math.max(1, got.unique)).toFixed(2)} ms)`,
        value: (c * 1000) / Math.max(1, got.unique),
        unit: 'ms',
      }),
    );
    report({ name: `cluster CPU per event, ${nodeCount} node${nodeCount > 1 ? 's' : ''}, the test servers (stores)`, value: (storesCpu * 1000) / Math.max(1, got.unique), unit: 'ms' });
    for (let i = 0; i < nodeCount; i++) {
      const prefix = `node${i + 1}|`;
      const mine = Object.entries(counted).filter(([key]) => key.startsWith(prefix));
      const all = mine.reduce((sum, [, n]) => sum + n, 0) / Math.max(1, got.unique);
      const top = mine
        .sort((a, b) => b[1] - a[1])
        .slice(0, 14)
        .map(([key, n]) => `${key.slice(prefix.length)} ${(n / Math.max(1, got.unique)).toFixed(2)}`);
      console.log(`cluster MongoDB commands per event, ${nodeCount} node${nodeCount > 1 ? 's' : ''}, node ${i + 1}: ${all.toFixed(1)} in all; ${top.join(', ')}`);
    }
  } finally {
    for (const node of nodes) await node.stop();
    await stores.stop();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  }
}

export async function benchCluster(): Promise<void> {
  const receiver = await startChild('bench/webhooks.ts', { BENCH_WEBHOOK_ROLE: 'receiver' });
  try {
    for (const nodes of NODES) await round(nodes, receiver);
  } finally {
    await receiver.stop();
  }
}
