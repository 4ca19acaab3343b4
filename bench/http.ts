import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { account, compareAuthenticatedGet, pairedSandboxInstance } from './api.js';
import { startChild } from './child.js';

/** wrk windows of whole seconds: 5 interleaved rounds of 3 s per contender by default (a median of 5 stands a noisy round better than one of 3). */
const ROUNDS = Number(process.env.BENCH_HTTP_ROUNDS ?? 5);
const ROUND_MS = Number(process.env.BENCH_HTTP_ROUND_MS ?? 3000);

/**
 * The hottest authenticated reads, GET /instances/{id} and GET session/status of a connected
 * instance, each with the JWT and with the token pair, against a bare Koa app answering the same
 * JSON. The gateway runs as built (dist/main.js, as `npm start` does) in a process of its own.
 */
export async function benchHttp(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'gw-bench-'));
  // The default log level, as `npm start` runs: the access log is part of the cost of a request.
  const gateway = await startChild('dist/main.js', { DATA_DIR: dataDir, LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info', MESSAGING_NETWORK: 'sandbox' });
  try {
    const acc = await account(gateway.origin, 'bench@example.com');
    const instance = await pairedSandboxInstance(acc, '5511900000001');
    const pair = { 'x-instance-token': instance.token, 'x-client-token': acc.clientToken };
    for (const [path, what] of [
      [`/instances/${instance.id}`, '/instances/{id}'],
      [`/instances/${instance.id}/session/status`, '/instances/{id}/session/status (connected)'],
    ] as const) {
      await compareAuthenticatedGet({ origin: gateway.origin, server: gateway, path, what, jwt: acc.auth, pair, durationMs: ROUNDS * ROUND_MS, rounds: ROUNDS });
    }
  } finally {
    await gateway.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchHttp();
