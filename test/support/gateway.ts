/* eslint-disable @typescript-eslint/no-explicit-any -- test answers are read field by field */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../bench/child.js';
import { startGateway, type Gateway, type GatewayOptions } from '../../src/composition-root.js';
import { loadConfig, type Config } from '../../src/infra/config/config.js';
import { sharedTestServerUrl } from '../servers/mongodb/targets.js';
import { eventStoreFor, releaseEventStore } from '../servers/eventstore/targets.js';

export interface TestGateway {
  gateway: Gateway;
  dataDir: string;
  api: Api;
  stop(): Promise<void>;
}

export interface Answer<T = any> {
  status: number;
  body: T;
  headers: Headers;
  text: string;
}

export interface RequestOptions {
  body?: unknown;
  /** Sent as-is, for malformed or oversized bodies. */
  raw?: string;
  token?: string;
  headers?: Record<string, string>;
}

export type Api = (method: string, path: string, options?: RequestOptions) => Promise<Answer>;

export function apiFor(baseUrl: string): Api {
  return async (method, path, options = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    let body: string | undefined;
    if (options.raw !== undefined) body = options.raw;
    else if (options.body !== undefined) body = JSON.stringify(options.body);
    if (body !== undefined) headers['content-type'] ??= 'application/json';
    const res = await fetch(baseUrl + path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // Not JSON (HTML docs page): keep the text.
    }
    return { status: res.status, body: parsed, headers: res.headers, text };
  };
}

/** For tests about the embedded stores' own files: both backends embedded, whatever TEST_* says. */
export const EMBEDDED = { EVENTSTORE_URL: '', MONGODB_URL: '' };

/** True when the suite runs with a backend on a test server (TEST_DOCSTORE / TEST_EVENTSTORE). */
export const onTestServers = () => process.env.TEST_DOCSTORE === 'mongodb' || process.env.TEST_EVENTSTORE === 'esdb';

/**
 * The backend URLs a test gateway on `dataDir` gets from TEST_DOCSTORE / TEST_EVENTSTORE (none
 * when both are unset), unless `env` names its own. The same dir gets the same ones, so a tool
 * run on a test gateway's dir (`npm run rebuild`) sees what that gateway wrote.
 */
export async function testBackendsFor(dataDir: string, env: Record<string, string> = {}): Promise<Record<string, string>> {
  const backends: Record<string, string> = {};
  // TEST_DOCSTORE=mongodb runs any suite with the read models on the MongoDB test server.
  if (process.env.TEST_DOCSTORE === 'mongodb' && env.MONGODB_URL === undefined) backends.MONGODB_URL = await sharedTestServerUrl(dataDir);
  // TEST_EVENTSTORE=esdb: the event log on the EventStoreDB test server instead.
  if (process.env.TEST_EVENTSTORE === 'esdb' && env.EVENTSTORE_URL === undefined) backends.EVENTSTORE_URL = await eventStoreFor(dataDir);
  return backends;
}

export async function startTestGateway(env: Record<string, string> = {}, options: GatewayOptions = {}, dataDir?: string): Promise<TestGateway> {
  const dir = dataDir ?? (await mkdtemp(join(tmpdir(), 'gw-test-')));
  const backends = await testBackendsFor(dir, env);
  const configFor = (port: number) => loadConfig({
    PORT: String(port),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    HOST: '127.0.0.1',
    DATA_DIR: dir,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    SCRYPT_LOG_N: '10',
    ALLOW_PRIVATE_TARGETS: 'true',
    ...backends,
    // Tests of other features send bursts; the limits have tests of their own.
    RATE_LIMIT_ACCOUNT_PER_S: '100000',
    RATE_LIMIT_INSTANCE_PER_S: '100000',
    ...env,
  });
  // Tests never ask web.whatsapp.com for its version (CI has no internet): the built-in one, unless a test says.
  const network = { fetchWaVersion: noVersionFetch, ...options.network };
  const gateway = await startOnFreePort(configFor, env.PORT === undefined, { ...options, network });
  return {
    gateway,
    dataDir: dir,
    api: apiFor(gateway.url),
    async stop() {
      await gateway.stop();
      if (!dataDir) {
        await rm(dir, { recursive: true, force: true });
        await releaseEventStore(dir);
      }
    },
  };
}

const noVersionFetch = async () => ({ version: [0, 0, 0], isLatest: false, error: new Error('tests do not reach web.whatsapp.com') });

/**
 * A port found free can be taken before the gateway binds it (another suite's server, an outgoing
 * connection's local port): a fresh port is tried then, unless the test chose the port itself.
 */
async function startOnFreePort(configFor: (port: number) => Config, retry: boolean, options: GatewayOptions): Promise<Gateway> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startGateway(configFor(await freePort()), options);
    } catch (error) {
      if (!retry || attempt >= 5 || (error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    }
  }
}

let counter = 0;

export interface TestAccount {
  accountId: string;
  email: string;
  password: string;
  clientToken: string;
  clientSecret: string;
  jwt: string;
}

/** Signs up a fresh account and signs it in. */
export async function newAccount(api: Api): Promise<TestAccount> {
  const email = `user${++counter}-${Date.now()}@example.com`;
  const password = 'correct horse battery';
  const signup = await api('POST', '/auth/signup', { body: { email, password } });
  if (signup.status !== 201) throw new Error(`signup failed: ${signup.status} ${signup.text}`);
  const login = await api('POST', '/auth/login', { body: { email, password } });
  if (login.status !== 200) throw new Error(`login failed: ${login.status} ${login.text}`);
  return {
    accountId: signup.body.account_id,
    email,
    password,
    clientToken: signup.body.client_token,
    clientSecret: signup.body.client_secret,
    jwt: login.body.access_token,
  };
}

export async function newInstance(api: Api, account: TestAccount, body: Record<string, unknown> = {}) {
  const res = await api('PUT', '/instances/create', { token: account.jwt, body: { name: 'test instance', ...body } });
  if (res.status !== 200) throw new Error(`create failed: ${res.status} ${res.text}`);
  return res.body as { id: string; token: string } & Record<string, unknown>;
}

export function expectError(answer: Answer, status: number, type: string): void {
  if (answer.status !== status || answer.body?.success !== false || answer.body?.error?.type !== type || answer.body?.code !== status) {
    throw new Error(`expected ${status} ${type}, got ${answer.status} ${answer.text}`);
  }
}
