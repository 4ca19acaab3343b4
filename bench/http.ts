import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { account, compareAuthenticatedGet } from './api.js';
import { startChild } from './child.js';

const DURATION_MS = Number(process.env.BENCH_HTTP_MS ?? 8000);
const ROUNDS = 8;

/** Authenticated GET /instances/{id} on the gateway against a bare Koa handler answering the same JSON. */
export async function benchHttp(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'gw-bench-'));
  const gateway = await startChild('dist/main.js', { DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
  try {
    const acc = await account(gateway.origin, 'bench@example.com');
    const instance = await acc.call('PUT', '/instances/create', { name: 'bench' });
    await compareAuthenticatedGet({
      origin: gateway.origin,
      path: `/instances/${instance.id as string}`,
      what: '/instances/{id}',
      jwt: acc.auth,
      pair: { 'x-instance-token': instance.token as string, 'x-client-token': acc.clientToken },
      durationMs: DURATION_MS,
      rounds: ROUNDS,
    });
  } finally {
    await gateway.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchHttp();
