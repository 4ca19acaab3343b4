import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { account, call, pairedSandboxInstance } from './api.js';
import { startChild, type Child } from './child.js';
import { report } from './lib.js';

const IDLE = Number(process.env.BENCH_REALTIME_IDLE ?? 1000);
const FANOUT = Number(process.env.BENCH_REALTIME_FANOUT ?? 100);
const MESSAGES = Number(process.env.BENCH_REALTIME_MESSAGES ?? 1000);

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Opens `n` WebSockets to `url`, `batch` at a time; resolves once all are open. */
async function openMany(url: string, n: number, onMessage?: (ws: WebSocket, data: Buffer) => void, batch = 100): Promise<WebSocket[]> {
  const sockets: WebSocket[] = [];
  for (let i = 0; i < n; i += batch) {
    const opened = await Promise.all(
      Array.from({ length: Math.min(batch, n - i) }, () => new Promise<WebSocket>((resolve, reject) => {
        const ws = new WebSocket(url);
        if (onMessage) ws.on('message', (data) => onMessage(ws, data as Buffer));
        ws.once('open', () => resolve(ws));
        ws.once('error', reject);
      })),
    );
    sockets.push(...opened);
  }
  return sockets;
}

/** Memory the server process gained per open idle socket, after a pause for the heap to settle. */
async function memoryPerSocket(server: Child, url: string): Promise<number> {
  await settle(1500);
  const before = server.rssBytes() ?? 0;
  const sockets = await openMany(url, IDLE);
  await settle(2500);
  const after = server.rssBytes() ?? 0;
  for (const ws of sockets) ws.terminate();
  await settle(500);
  return (after - before) / IDLE;
}

/**
 * The realtime stream (CONTRACT.md, Realtime stream), measured where a user meets it: the memory
 * an idle subscriber costs the gateway process (against a bare `ws` server holding as many), and
 * how fast messages reach 100 subscribers of one instance (against the rate the sandbox took
 * them in: 1.00x means the fan-out keeps up). The gateway runs as built, in its own process; the
 * subscribers and the senders run here.
 */
export async function benchRealtime(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'gw-bench-rt-'));
  const gateway = await startChild('dist/main.js', { DATA_DIR: dataDir, LOG_LEVEL: 'warn', MESSAGING_NETWORK: 'sandbox', REALTIME_MAX_STREAMS_PER_ACCOUNT: String(IDLE + FANOUT) });
  const bare = await startChild('bench/fixtures/bare-ws.ts', {});
  try {
    const acc = await account(gateway.origin, 'realtime-bench@example.com');
    const me = '5511900000101';
    const them = '5511900000102';
    const instance = await pairedSandboxInstance(acc, me);
    await acc.call('POST', '/sandbox/phones', { phone: them, push_name: 'Sender' });
    const token = acc.auth.authorization.slice('Bearer '.length);
    const streamUrl = `${gateway.origin.replace('http', 'ws')}/instances/${instance.id}/events/ws?types=Message&access_token=${token}`;

    const perStream = await memoryPerSocket(gateway, streamUrl);
    const perBare = await memoryPerSocket(bare, bare.origin.replace('http', 'ws'));
    // Resident memory moves with the collector: a bare server's few KiB per socket can read as
    // nothing, so it is printed beside the gateway's rather than divided by.
    report({ name: `realtime: gateway memory per idle subscriber (${IDLE} open)`, value: perStream / 1024, unit: 'KiB', target: '<= 64 KiB', met: perStream / 1024 <= 64 });
    report({ name: `realtime: bare ws server memory per idle socket (${IDLE} open)`, value: perBare / 1024, unit: 'KiB' });

    let received = 0;
    let lastAt = 0;
    const subscribers = await openMany(streamUrl, FANOUT, (ws, data) => {
      received++;
      lastAt = performance.now();
      const { seq } = JSON.parse(data.toString()) as { seq: number };
      ws.send(JSON.stringify({ ack: seq }));
    });
    const started = performance.now();
    let sent = 0;
    // Eight senders at once, as integrators' traffic arrives.
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (sent < MESSAGES) {
          sent++;
          await call(gateway.origin, 'POST', `/sandbox/phones/${them}/messages`, { to: me, text: `fan-out ${sent}` }, acc.auth);
        }
      }),
    );
    const ingestS = (performance.now() - started) / 1000;
    const due = MESSAGES * FANOUT;
    const deadline = Date.now() + 120_000;
    while (received < due && Date.now() < deadline) await settle(20);
    const fanoutS = (lastAt - started) / 1000;
    for (const ws of subscribers) ws.terminate();
    report({
      name: `realtime: messages/s reaching ${FANOUT} subscribers (${received}/${due} bodies)`,
      value: MESSAGES / fanoutS,
      unit: 'msg/s',
      baseline: { name: 'messages/s the sandbox took in', value: MESSAGES / ingestS },
      target: '>= 0.9x, every body delivered',
      met: received === due && MESSAGES / fanoutS >= 0.9 * (MESSAGES / ingestS),
    });
  } finally {
    await Promise.all([gateway.stop(), bare.stop()]);
    await rm(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchRealtime();
