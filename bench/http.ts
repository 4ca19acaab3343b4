import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startChild } from './child.js';
import { load } from './load.js';
import { compareInterleaved } from './rounds.js';

const DURATION_MS = Number(process.env.BENCH_HTTP_MS ?? 8000);
const ROUNDS = 8;

async function json(origin: string, method: string, path: string, body?: unknown, token?: string) {
  const res = await fetch(origin + path, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return (await res.json()) as Record<string, unknown>;
}

/** Authenticated GET /instances/{id} on the gateway against a bare Koa handler answering the same JSON. */
export async function benchHttp(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'gw-bench-'));
  const gateway = await startChild('dist/main.js', { DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
  try {
    const o = gateway.origin;
    const signup = await json(o, 'POST', '/auth/signup', { email: 'bench@example.com', password: 'bench password' });
    const login = await json(o, 'POST', '/token', { client_token: signup.client_token, client_secret: signup.client_secret });
    const jwt = login.access_token as string;
    const instance = await json(o, 'PUT', '/instances/create', { name: 'bench' }, jwt);
    const path = `/instances/${instance.id as string}`;
    const answer = await json(o, 'GET', path, undefined, jwt);

    const bare = await startChild('bench/fixtures/bare-koa.ts', { BENCH_BODY: JSON.stringify(answer) });
    try {
      const jwtHeaders = { authorization: `Bearer ${jwt}` };
      const pairHeaders = { 'x-instance-token': instance.token as string, 'x-client-token': signup.client_token as string };
      // Warm both up so JIT and connection set-up do not count.
      await load(bare.origin, path, {}, 500);
      await load(o, path, jwtHeaders, 500);
      await load(o, path, pairHeaders, 500);
      await compareInterleaved({
        label: 'http',
        baseline: { name: 'bare Koa GET', run: (ms) => load(bare.origin, path, {}, ms) },
        contenders: [
          { name: 'GET /instances/{id} with JWT', run: (ms) => load(o, path, jwtHeaders, ms) },
          { name: 'GET /instances/{id} with token pair', run: (ms) => load(o, path, pairHeaders, ms) },
        ],
        durationMs: DURATION_MS,
        rounds: ROUNDS,
        target: 0.5,
      });
    } finally {
      await bare.stop();
    }
  } finally {
    await gateway.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchHttp();
