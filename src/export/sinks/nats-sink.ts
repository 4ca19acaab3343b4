import { createRequire } from 'node:module';
import type { ConnectionOptions, JetStreamClient, NatsConnection } from 'nats';
import type * as Nats from 'nats';

/** Required when a sink is configured: the client is modules a gateway without export need not load at start. */
let loaded: typeof Nats | undefined;
const nats = () => (loaded ??= createRequire(import.meta.url)('nats') as typeof Nats);
import type { Logger } from '../../infra/logging/logger.js';
import { describeError, type ExportMessage, type PublishOutcome, type Sink } from './port.js';

export interface NatsSinkOptions {
  /** One or more `nats://` / `tls://` URLs, comma-separated; credentials in the first one that has them. */
  url: string;
  subjectPrefix: string;
  stream: string;
  retryMaxMs: number;
  /** How long one publish waits for its JetStream ack. */
  ackTimeoutMs?: number;
  logger: Logger;
}

/**
 * How long JetStream remembers a message id: a message published again within it (after a crash
 * or a lost ack) is stored once. Past it the consumer still sees the same `Nats-Msg-Id`.
 */
const DUPLICATE_WINDOW_MS = 10 * 60_000;

/**
 * NATS JetStream through the official `nats` client: the stream (`<prefix>.>`, file storage) is
 * created when missing, each message carries `Nats-Msg-Id` = the event id so the server drops a
 * second copy, and every publish waits for its ack. The client reconnects by itself while a
 * connection lives; a connection that could not be made or was closed (refused credentials) is
 * made again here with exponential backoff up to `retryMaxMs`.
 */
export class NatsSink implements Sink {
  readonly kind = 'nats' as const;
  private connection: NatsConnection | null = null;
  private js: JetStreamClient | null = null;
  private up = false;
  private error: string | null = 'connecting';
  private readonly listeners: (() => void)[] = [];
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private attempt = 0;
  private readonly options: ConnectionOptions;

  constructor(private readonly o: NatsSinkOptions) {
    this.options = natsConnectionOptions(o.url);
  }

  get ready(): boolean {
    return this.up && this.js !== null;
  }

  get lastError(): string | null {
    return this.ready ? null : this.error;
  }

  onReady(listener: () => void): void {
    this.listeners.push(listener);
  }

  start(): void {
    void this.open();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.up = false;
    const connection = this.connection;
    this.connection = null;
    this.js = null;
    // Drained: publishes awaiting their acks get them before the connection closes.
    await connection?.drain().catch(() => connection.close());
  }

  private async open(): Promise<void> {
    if (this.stopped) return;
    let connection: NatsConnection | null = null;
    try {
      connection = await nats().connect({
        ...this.options,
        name: 'messaging-gateway export',
        maxReconnectAttempts: -1,
        reconnectTimeWait: Math.min(2000, this.o.retryMaxMs),
        waitOnFirstConnect: false,
      });
      const jsm = await connection.jetstreamManager();
      await this.ensureStream(jsm);
      if (this.stopped) {
        await connection.close();
        return;
      }
      this.connection = connection;
      this.js = connection.jetstream();
      this.attempt = 0;
      this.watch(connection);
      this.becameReady();
    } catch (err) {
      await connection?.close().catch(() => undefined);
      this.failed(err, 'the NATS export could not connect; retrying');
      this.retryLater();
    }
  }

  private async ensureStream(jsm: Awaited<ReturnType<NatsConnection['jetstreamManager']>>): Promise<void> {
    const subjects = [`${this.o.subjectPrefix}.>`];
    try {
      await jsm.streams.info(this.o.stream);
    } catch (err) {
      if (!/not found/i.test(describeError(err))) throw err;
      await jsm.streams.add({ name: this.o.stream, subjects, storage: nats().StorageType.File, duplicate_window: nats().nanos(DUPLICATE_WINDOW_MS) });
      this.o.logger.info({ stream: this.o.stream, subjects }, 'JetStream stream created for the export');
    }
  }

  private watch(connection: NatsConnection): void {
    void (async () => {
      for await (const status of connection.status()) {
        if (status.type === nats().Events.Disconnect) {
          this.up = false;
          this.failed(new Error(`disconnected from ${String(status.data)}`), 'the NATS export lost its connection; reconnecting');
        } else if (status.type === nats().Events.Reconnect) this.becameReady();
        else if (status.type === nats().Events.Error) this.error = describeError(status.data);
      }
    })().catch(() => undefined);
    void connection.closed().then((err) => {
      if (this.connection !== connection) return;
      this.connection = null;
      this.js = null;
      this.up = false;
      if (this.stopped) return;
      this.failed(err ?? new Error('connection closed'), 'the NATS export connection closed; connecting again');
      this.retryLater();
    });
  }

  private becameReady(): void {
    this.up = true;
    this.error = null;
    this.o.logger.info({ stream: this.o.stream }, 'NATS export connected');
    for (const listener of this.listeners) listener();
  }

  private failed(err: unknown, what: string): void {
    const text = describeError(err);
    if (text !== this.error) this.o.logger.warn({ err: text }, what);
    this.error = text;
  }

  private retryLater(): void {
    if (this.stopped) return;
    const attempt = ++this.attempt;
    const base = Math.min(this.o.retryMaxMs, 200 * 2 ** Math.min(attempt - 1, 20));
    const delay = Math.round(base * (0.8 + 0.4 * Math.random()));
    this.timer = setTimeout(() => void this.open(), Math.min(delay, this.o.retryMaxMs));
    this.timer.unref();
  }

  async publish(messages: readonly ExportMessage[]): Promise<PublishOutcome> {
    const js = this.js;
    if (!js || !this.up) return { published: 0, failure: { message: `not connected: ${this.error ?? 'connecting'}`, permanent: false } };
    const timeout = this.o.ackTimeoutMs ?? 30_000;
    const acks = messages.map((m) => {
      const h = nats().headers();
      h.set('webhook-id', m.headers['webhook-id']);
      h.set('webhook-timestamp', m.headers['webhook-timestamp']);
      h.set('webhook-signature', m.headers['webhook-signature']);
      h.set('Content-Type', 'application/json');
      // Sent in order on the one connection; the stream stores them in that order.
      return js.publish(`${this.o.subjectPrefix}.${m.instanceId}.${m.type}`, m.body, { msgID: m.id, headers: h, timeout });
    });
    const settled = await Promise.allSettled(acks);
    const failedAt = settled.findIndex((s) => s.status === 'rejected');
    if (failedAt === -1) return { published: messages.length };
    const reason = (settled[failedAt] as PromiseRejectedResult).reason as { code?: string } | undefined;
    const text = describeError(reason);
    const permanent = reason?.code === nats().ErrorCode.MaxPayloadExceeded || /maximum (message|payload)|message size exceeds/i.test(text);
    const noStream = reason?.code === nats().ErrorCode.NoResponders || /no responders/i.test(text);
    return {
      published: failedAt,
      failure: {
        message: noStream ? `no JetStream stream takes subject ${this.o.subjectPrefix}.${messages[failedAt]?.instanceId}.* (stream '${this.o.stream}')` : `publish failed: ${text}`,
        permanent,
      },
    };
  }
}

/** Servers without credentials, and the credentials (user:pass, or a token as the user part) as options. */
export function natsConnectionOptions(url: string): ConnectionOptions {
  const servers: string[] = [];
  const options: ConnectionOptions = {};
  for (const part of url.split(',').map((s) => s.trim()).filter(Boolean)) {
    const parsed = new URL(part);
    if (parsed.protocol === 'tls:') options.tls = {};
    if (parsed.username && options.user === undefined && options.token === undefined) {
      if (parsed.password) {
        options.user = decodeURIComponent(parsed.username);
        options.pass = decodeURIComponent(parsed.password);
      } else options.token = decodeURIComponent(parsed.username);
    }
    // hostname keeps an IPv6 address's brackets.
    servers.push(`${parsed.hostname}:${parsed.port || '4222'}`);
  }
  return { ...options, servers };
}
