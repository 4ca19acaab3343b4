import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startChild } from './child.js';
import { report } from './lib.js';
import { load } from './load.js';

const DURATION_MS = Number(process.env.BENCH_HTTP_MS ?? 4000);

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
      // Warm both up so JIT and connection set-up do not count.
      await load(bare.origin, path, {}, 500);
      await load(o, path, { authorization: `Bearer ${jwt}` }, 500);
      const base = await load(bare.origin, path, {}, DURATION_MS);
      const gw = await load(o, path, { authorization: `Bearer ${jwt}` }, DURATION_MS);
      const pair = await load(o, path, { 'x-instance-token': instance.token as string, 'x-client-token': signup.client_token as string }, DURATION_MS);
      if (gw.errors + pair.errors + base.errors > 0) throw new Error(`errors during load: ${gw.errors} ${pair.errors} ${base.errors}`);
      report({ name: 'http bare Koa GET (baseline)', value: base.perSecond, unit: 'req/s' });
      for (const [name, r] of [['GET /instances/{id} with JWT', gw], ['GET /instances/{id} with token pair', pair]] as const) {
        report({
          name: `http ${name}`,
          value: r.perSecond,
          unit: 'req/s',
          baseline: { name: 'bare Koa', value: base.perSecond },
          target: '>= 0.5x',
          met: r.perSecond >= 0.5 * base.perSecond,
        });
        report({ name: `http ${name} latency p50/p99`, value: r.p50ms, unit: `ms p50, ${r.p99ms.toFixed(2)} ms p99` });
      }
    } finally {
      await bare.stop();
    }
  } finally {
    await gateway.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchHttp();
