import { startChild, type Child } from './child.js';
import { load, loadOn } from './load.js';
import { compareInterleaved } from './rounds.js';

export type Json = Record<string, unknown>;

/** One JSON call to the gateway; anything but a 2xx ends the bench with what the gateway said. */
export async function call(origin: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Json> {
  const res = await fetch(origin + path, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = (await res.json()) as Json;
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(answer)}`);
  return answer;
}

/** A signed-up account with its JWT (the signing key lives in DATA_DIR, so it outlives a restart). */
export async function account(origin: string, email: string) {
  const signup = await call(origin, 'POST', '/auth/signup', { email, password: 'bench password' });
  const login = await call(origin, 'POST', '/token', { client_token: signup.client_token, client_secret: signup.client_secret });
  const auth = { authorization: `Bearer ${login.access_token as string}` };
  return {
    accountId: signup.account_id as string,
    clientToken: signup.client_token as string,
    auth,
    call: (method: string, path: string, body?: unknown) => call(origin, method, path, body, auth),
  };
}

/** A sandbox instance paired with a new sandbox phone by QR, connected when this returns. */
export async function pairedSandboxInstance(acc: Awaited<ReturnType<typeof account>>, phone: string): Promise<{ id: string; token: string }> {
  const instance = await acc.call('PUT', '/instances/create', { name: `bench ${phone}` });
  const id = instance.id as string;
  await acc.call('POST', '/sandbox/phones', { phone, push_name: `Bench ${phone}` });
  const qr = (await acc.call('GET', `/instances/${id}/session/qr`)).data as Json;
  await acc.call('POST', `/sandbox/phones/${phone}/scan`, { qr: qr.qr });
  for (let i = 0; i < 500; i++) {
    const status = (await acc.call('GET', `/instances/${id}/session/status`)).data as Json;
    if (status.connected === true) return { id, token: instance.token as string };
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`instance ${id} did not connect`);
}

/**
 * An authenticated GET on the gateway, with the JWT and with the token pair, against bench/
 * fixtures/bare-koa.ts answering the same JSON on the same route pattern. Everything is warmed
 * up first, then compared in interleaved rounds; the load comes from wrk (bench/load.ts).
 */
export async function compareAuthenticatedGet(options: {
  origin: string;
  /** The gateway's process, when the bench started it: its CPU time per request is reported too. */
  server?: Child;
  path: string;
  /** The route, OpenAPI style, then an optional note: the bare app mounts the route (its first word). */
  what: string;
  jwt: Record<string, string>;
  pair: Record<string, string>;
  durationMs: number;
  rounds: number;
}): Promise<void> {
  const { origin, path, what, server } = options;
  const gateway = (headers: Record<string, string>) => (ms: number) => (server ? loadOn(server, path, headers, ms) : load(origin, path, headers, ms));
  const answer = await call(origin, 'GET', path, undefined, options.jwt);
  const route = what.replace(/\{(\w+)\}/g, ':$1').split(' ')[0] as string;
  const bare = await startChild('bench/fixtures/bare-koa.ts', { BENCH_BODY: JSON.stringify(answer), BENCH_ROUTE: route });
  try {
    await load(bare.origin, path, {}, 1000);
    await load(origin, path, options.jwt, 1000);
    await load(origin, path, options.pair, 1000);
    await compareInterleaved({
      label: 'http',
      baseline: { name: `bare Koa GET, same ${what} JSON`, run: (ms) => loadOn(bare, path, {}, ms) },
      contenders: [
        { name: `GET ${what} with JWT`, run: gateway(options.jwt) },
        { name: `GET ${what} with token pair`, run: gateway(options.pair) },
      ],
      durationMs: options.durationMs,
      rounds: options.rounds,
      // Issue #31: authenticated GETs at 0.7x of bare Koa answering the same JSON.
      target: 0.7,
    });
  } finally {
    await bare.stop();
  }
}
