import { startChild } from './child.js';
import { load } from './load.js';
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

/**
 * An authenticated GET on the gateway, with the JWT and with the token pair, against bench/
 * fixtures/bare-koa.ts answering the same JSON on `/instances/:id` (routing costs the same on any
 * path). Everything is warmed up first, then compared in interleaved rounds.
 */
export async function compareAuthenticatedGet(options: {
  origin: string;
  path: string;
  what: string;
  jwt: Record<string, string>;
  pair: Record<string, string>;
  durationMs: number;
  rounds: number;
}): Promise<void> {
  const { origin, path, what } = options;
  const answer = await call(origin, 'GET', path, undefined, options.jwt);
  const bare = await startChild('bench/fixtures/bare-koa.ts', { BENCH_BODY: JSON.stringify(answer) });
  try {
    const barePath = path.split('/').slice(0, 3).join('/');
    await load(bare.origin, barePath, {}, 500);
    await load(origin, path, options.jwt, 500);
    await load(origin, path, options.pair, 500);
    await compareInterleaved({
      label: 'http',
      baseline: { name: `bare Koa GET, same ${what} JSON`, run: (ms) => load(bare.origin, barePath, {}, ms) },
      contenders: [
        { name: `GET ${what} with JWT`, run: (ms) => load(origin, path, options.jwt, ms) },
        { name: `GET ${what} with token pair`, run: (ms) => load(origin, path, options.pair, ms) },
      ],
      durationMs: options.durationMs,
      rounds: options.rounds,
      target: 0.5,
    });
  } finally {
    await bare.stop();
  }
}
