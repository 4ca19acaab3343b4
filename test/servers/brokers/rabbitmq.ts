import { connect } from 'amqplib';
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../../bench/child.js';
import { spawnServer, stopGroup, waitUntilReady } from './processes.js';

/** Debian's rabbitmq-server, run directly (its /usr/sbin wrapper would switch to the rabbitmq user). */
const SERVER = '/usr/lib/rabbitmq/bin/rabbitmq-server';

export interface RabbitMq {
  /** amqp://guest:guest@127.0.0.1:<port> */
  url: string;
  port: number;
  /** Stops the broker, keeping its data (durable queues and persistent messages survive). */
  stop(): Promise<void>;
  /** Starts it again on the same port and data. */
  start(): Promise<void>;
  /** Stops it for good and removes its directory. */
  dispose(): Promise<void>;
}

/**
 * A RabbitMQ node of the test's own: a temporary directory (mnesia, logs, config, cookie as its
 * HOME), a node name of its own, and free ports for AMQP, Erlang distribution and an epmd of its
 * own (started here, so that nothing of another run is shared or left behind). Starting takes
 * seconds to tens of seconds on a busy machine: readiness is a real AMQP connection.
 */
export async function startRabbitMq(options: { startTimeoutMs?: number; /** The broker's max_message_size (bytes). */ maxMessageBytes?: number } = {}): Promise<RabbitMq> {
  const dir = await mkdtemp(join(tmpdir(), 'gw-rabbitmq-'));
  const [port, distPort, epmdPort] = (await distinctFreePorts(3)) as [number, number, number];
  const cookie = join(dir, '.erlang.cookie');
  await writeFile(cookie, randomBytes(20).toString('hex'));
  await chmod(cookie, 0o400);
  await writeFile(join(dir, 'enabled_plugins'), '[].\n');
  await writeFile(join(dir, 'rabbitmq-env.conf'), '');
  await writeFile(
    join(dir, 'rabbitmq.conf'),
    [`listeners.tcp.default = 127.0.0.1:${port}`, 'disk_free_limit.absolute = 1MB', 'log.console = false', 'log.file.level = warning', ...(options.maxMessageBytes ? [`max_message_size = ${options.maxMessageBytes}`] : []), ''].join('\n'),
  );
  const env = {
    HOME: dir,
    RABBITMQ_NODENAME: `gwtest${process.pid}x${randomBytes(3).toString('hex')}@localhost`,
    RABBITMQ_NODE_PORT: String(port),
    RABBITMQ_DIST_PORT: String(distPort),
    ERL_EPMD_PORT: String(epmdPort),
    RABBITMQ_MNESIA_BASE: join(dir, 'mnesia'),
    RABBITMQ_LOG_BASE: join(dir, 'log'),
    RABBITMQ_CONF_ENV_FILE: join(dir, 'rabbitmq-env.conf'),
    RABBITMQ_CONFIG_FILE: join(dir, 'rabbitmq'),
    RABBITMQ_ADVANCED_CONFIG_FILE: join(dir, 'advanced.config'),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(dir, 'enabled_plugins'),
    RABBITMQ_PLUGINS_EXPAND_DIR: join(dir, 'plugins-expand'),
    RABBITMQ_PID_FILE: join(dir, 'rabbitmq.pid'),
  };
  // epmd of our own in the foreground: it is ours to stop, not a daemon left behind.
  const epmd = spawnServer('epmd', ['-port', String(epmdPort)], env, dir);
  const url = `amqp://guest:guest@127.0.0.1:${port}`;
  const timeoutMs = options.startTimeoutMs ?? 180_000;
  let server: ReturnType<typeof spawnServer> | null = null;

  const start = async () => {
    const running = spawnServer(SERVER, [], env, dir);
    server = running;
    await waitUntilReady(
      `rabbitmq-server on port ${port}`,
      async () => {
        const connection = await connect(url, { timeout: 5000 });
        await connection.close();
        return true;
      },
      running,
      timeoutMs,
    );
  };
  const stop = async () => {
    if (server) await stopGroup(server.child, server.exited);
    server = null;
  };
  try {
    await start();
  } catch (err) {
    await stop();
    await stopGroup(epmd.child, epmd.exited, 5000);
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    url,
    port,
    stop,
    start,
    async dispose() {
      await stop();
      await stopGroup(epmd.child, epmd.exited, 5000);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function distinctFreePorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < n) ports.add(await freePort());
  return [...ports];
}
