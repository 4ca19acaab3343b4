import { connect } from 'nats';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../../bench/child.js';
import { spawnServer, stopGroup, waitUntilReady } from './processes.js';

export interface NatsServer {
  /** nats://127.0.0.1:<port> (credentials, when asked for, are not in it). */
  url: string;
  port: number;
  stop(): Promise<void>;
  /** Starts it again on the same port and store (JetStream keeps its streams). */
  start(): Promise<void>;
  dispose(): Promise<void>;
}

/** Debian's nats-server with JetStream, on a free port, its store in a temporary directory. */
export async function startNats(options: { user?: string; pass?: string; startTimeoutMs?: number; /** The server's max_payload (bytes). */ maxPayload?: number } = {}): Promise<NatsServer> {
  const dir = await mkdtemp(join(tmpdir(), 'gw-nats-'));
  const port = await freePort();
  const args = ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', join(dir, 'jetstream'), '--server_name', `gwtest${process.pid}p${port}`];
  if (options.user !== undefined) args.push('--user', options.user, '--pass', options.pass ?? '');
  if (options.maxPayload !== undefined) {
    // No command-line flag for it: a config file of its own.
    await writeFile(join(dir, 'nats.conf'), `max_payload: ${options.maxPayload}\n`);
    args.push('-c', join(dir, 'nats.conf'));
  }
  const url = `nats://127.0.0.1:${port}`;
  let server: ReturnType<typeof spawnServer> | null = null;
  const start = async () => {
    const running = spawnServer('nats-server', args, {}, dir);
    server = running;
    await waitUntilReady(
      `nats-server on port ${port}`,
      async () => {
        const nc = await connect({ servers: `127.0.0.1:${port}`, ...(options.user !== undefined ? { user: options.user, pass: options.pass ?? '' } : {}), timeout: 2000, maxReconnectAttempts: 0 });
        try {
          await (await nc.jetstreamManager()).getAccountInfo();
          return true;
        } finally {
          await nc.close();
        }
      },
      running,
      options.startTimeoutMs ?? 60_000,
    );
  };
  const stop = async () => {
    if (server) await stopGroup(server.child, server.exited);
    server = null;
  };
  await start().catch(async (err: unknown) => {
    await stop();
    await rm(dir, { recursive: true, force: true });
    throw err;
  });
  return {
    url,
    port,
    stop,
    start,
    async dispose() {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
