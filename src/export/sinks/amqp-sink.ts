import { setMaxListeners } from 'node:events';
import { createRequire } from 'node:module';
import type { ChannelModel, ConfirmChannel, RecoveringChannelModel } from 'amqplib';
import type * as Amqp from 'amqplib';

/** Required when a sink is configured: the client is modules a gateway without export need not load at start. */
const amqplib = () => createRequire(import.meta.url)('amqplib') as typeof Amqp;
import type { Logger } from '../../infra/logging/logger.js';
import { describeError, type ExportMessage, type PublishOutcome, type Sink } from './port.js';

/** How long a learned size limit holds before one more message over it is offered to the broker. */
const MAX_BODY_KEPT_MS = 10 * 60_000;

export interface AmqpSinkOptions {
  url: string;
  exchange: string;
  /** Longest wait between reconnects. */
  retryMaxMs: number;
  /** How long a batch may wait for its confirms before it counts as failed (and is published again). */
  confirmTimeoutMs?: number;
  logger: Logger;
}

/**
 * RabbitMQ (AMQP 0-9-1) through amqplib: one connection with amqplib's own recovery (exponential
 * backoff with jitter, capped at `retryMaxMs`), one confirm channel on it, a durable topic exchange
 * asserted on every (re)connect. Messages are persistent and each waits for the broker's confirm.
 *
 * Whatever stops the channel (a refused login, an exchange of another type, a publish the broker
 * closes the channel over) ends the connection too, so that recovery starts again from the login
 * and the exchange, and says why in `lastError`.
 */
export class AmqpSink implements Sink {
  readonly kind = 'amqp' as const;
  private model: RecoveringChannelModel | null = null;
  private channel: ConfirmChannel | null = null;
  private readonly listeners: (() => void)[] = [];
  private error: string | null = 'connecting';
  private stopped = false;
  /**
   * The broker's `max_message_size`, learned from its refusal (RabbitMQ closes the channel with
   * PRECONDITION_FAILED "message size N is larger than configured max size M"). From then on a
   * larger message is refused here, for good, without a publish: the lane passes it over instead
   * of closing the channel over it again and again. Kept until restart (a broker whose limit is
   * raised meanwhile takes such messages after the gateway restarts).
   */
  /**
   * The broker's max_message_size, learned from its refusal. Forgotten after a while: an operator
   * may raise it, and a message refused for good must be one the broker refuses now.
   */
  private maxBody: { bytes: number; learnedAt: number } | null = null;

  constructor(private readonly o: AmqpSinkOptions) {}

  get ready(): boolean {
    return this.channel !== null;
  }

  get lastError(): string | null {
    return this.channel ? null : this.error;
  }

  onReady(listener: () => void): void {
    this.listeners.push(listener);
  }

  start(): void {
    void this.open().catch((err: unknown) => {
      // Only an option amqplib refuses at once lands here; the URL was checked at start.
      this.error = describeError(err);
      this.o.logger.error({ err: this.error }, 'the AMQP export could not start');
    });
  }

  private async open(): Promise<void> {
    const model = await amqplib().connect(this.o.url, {
      clientProperties: { connection_name: 'messaging-gateway export' },
      recovery: {
        initialDelay: Math.min(200, this.o.retryMaxMs),
        maxDelay: this.o.retryMaxMs,
        waitForConnect: false,
        setup: (connection: ChannelModel) => this.setUp(connection),
      },
    });
    if (this.stopped) {
      await model.close().catch(() => undefined);
      return;
    }
    this.model = model;
    model.on('connect-failed', (err: Error) => this.failed(err, 'the AMQP export could not connect; retrying'));
    model.on('disconnect', (err: Error) => this.failed(err, 'the AMQP export lost its connection; reconnecting'));
    model.on('error', (err: Error) => this.o.logger.warn({ err: describeError(err) }, 'AMQP export connection error'));
    model.on('blocked', (reason: string) => this.o.logger.warn({ reason }, 'RabbitMQ blocks the export (resource alarm)'));
    model.on('connect', () => {
      this.error = null;
      this.o.logger.info({ exchange: this.o.exchange }, 'AMQP export connected');
      for (const listener of this.listeners) listener();
    });
  }

  private async setUp(connection: ChannelModel): Promise<void> {
    const channel = await connection.createConfirmChannel();
    // Every lane publishing on it waits for its drain or close.
    setMaxListeners(0, channel);
    // A channel error with no listener would throw out of the process.
    channel.on('error', (err: Error) => {
      this.error = describeError(err);
      const limit = /larger than configured max size (\d+)/i.exec(err.message);
      if (limit) this.maxBody = { bytes: Number(limit[1]), learnedAt: Date.now() };
    });
    channel.on('close', () => {
      if (this.channel !== channel) return;
      this.channel = null;
      // Closed under a live connection (an exchange deleted, a refused publish): start over.
      if (!this.stopped) void connection.close().catch(() => undefined);
    });
    try {
      await channel.assertExchange(this.o.exchange, 'topic', { durable: true });
    } catch (err) {
      throw new Error(`exchange '${this.o.exchange}' could not be declared as a durable topic exchange: ${describeError(err)}`);
    }
    this.channel = channel;
  }

  private failed(err: Error, what: string): void {
    this.channel = null;
    const text = describeError(err);
    if (text !== this.error) this.o.logger.warn({ err: text }, what);
    this.error = text;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.channel = null;
    await this.model?.close().catch(() => undefined);
  }

  async publish(messages: readonly ExportMessage[]): Promise<PublishOutcome> {
    const channel = this.channel;
    if (!channel) return { published: 0, failure: { message: `not connected: ${this.error ?? 'connecting'}`, permanent: false } };
    const limit = this.maxBody && Date.now() - this.maxBody.learnedAt < MAX_BODY_KEPT_MS ? this.maxBody.bytes : null;
    const tooLarge = limit === null ? -1 : messages.findIndex((m) => m.body.length > limit);
    const refusal = (at: number): PublishOutcome => ({
      published: at,
      failure: { message: `the broker refuses messages over ${limit} bytes (its max_message_size); this one has ${messages[at]?.body.length} bytes`, permanent: true },
    });
    if (tooLarge === 0) return refusal(0);
    const outcome = await this.publishAll(channel, tooLarge === -1 ? messages : messages.slice(0, tooLarge));
    return tooLarge !== -1 && outcome.failure === undefined ? refusal(tooLarge) : outcome;
  }

  private async publishAll(channel: ConfirmChannel, messages: readonly ExportMessage[]): Promise<PublishOutcome> {
    const confirms: Promise<Error | null>[] = [];
    let closed: Error | null = null;
    const onClose = () => (closed ??= new Error('channel closed'));
    channel.once('close', onClose);
    try {
      for (const m of messages) {
        if (closed) break;
        confirms.push(
          new Promise<Error | null>((resolve) => {
            try {
              // A batch is bounded (the lanes' batch size), so amqplib's buffer is too: its
              // `false` (buffer above the high-water mark) is not waited on per message.
              channel.publish(
                this.o.exchange,
                `${m.instanceId}.${m.type}`,
                m.body,
                {
                  persistent: true,
                  messageId: m.id,
                  contentType: 'application/json',
                  type: m.type,
                  timestamp: Number(m.headers['webhook-timestamp']),
                  appId: 'messaging-gateway',
                  headers: { ...m.headers },
                },
                (err: unknown) => resolve(err ? new Error(describeError(err)) : null),
              );
            } catch (err) {
              resolve(new Error(describeError(err)));
            }
          }),
        );
      }
      const outcomes = await withTimeout(Promise.all(confirms), this.o.confirmTimeoutMs ?? 30_000);
      if (outcomes === 'timeout') return { published: 0, failure: { message: 'the broker did not confirm in time', permanent: false } };
      const failedAt = outcomes.findIndex((o) => o !== null);
      if (failedAt === -1 && confirms.length === messages.length) return { published: messages.length };
      const at = failedAt === -1 ? confirms.length : failedAt;
      const why = (failedAt === -1 ? closed : outcomes[failedAt]) ?? new Error('channel closed');
      return { published: at, failure: { message: `publish failed: ${describeError(why)}${this.error && this.error !== why.message ? ` (${this.error})` : ''}`, permanent: false } };
    } finally {
      channel.off('close', onClose);
    }
  }
}

async function withTimeout<T>(work: Promise<T>, ms: number): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([work, new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
