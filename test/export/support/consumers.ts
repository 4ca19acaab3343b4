import { connect as amqpConnect, type Channel, type ChannelModel } from 'amqplib';
import { connect as natsConnect, type NatsConnection } from 'nats';
import type { Received } from '../../webhooks/support/receiver.js';

/** A message as a consumer of either broker sees it, shaped like a webhook request for `verifies`. */
export interface Consumed extends Received {
  /** AMQP routing key or NATS subject. */
  topic: string;
  /** AMQP message-id or NATS Nats-Msg-Id. */
  messageId: string;
  persistent?: boolean;
}

/**
 * A consumer of the gateway's exchange, as an integrator would run one: a durable queue bound to
 * `#` (declared before the gateway publishes), messages acknowledged once recorded. It survives a
 * broker restart by connecting again (`reconnect`); the queue keeps what arrived meanwhile.
 */
export class AmqpTap {
  readonly received: Consumed[] = [];
  private model: ChannelModel | null = null;
  private channel: Channel | null = null;

  constructor(
    private readonly url: string,
    private readonly exchange: string,
    readonly queue = `tap-${process.pid}-${Math.random().toString(36).slice(2, 8)}`,
    private readonly pattern = '#',
  ) {}

  async start(): Promise<this> {
    const model = await amqpConnect(this.url);
    model.on('error', () => undefined);
    const channel = await model.createChannel();
    channel.on('error', () => undefined);
    await channel.assertExchange(this.exchange, 'topic', { durable: true });
    await channel.assertQueue(this.queue, { durable: true });
    await channel.bindQueue(this.queue, this.exchange, this.pattern);
    await channel.consume(this.queue, (msg) => {
      if (!msg) return;
      const headers = Object.fromEntries(Object.entries(msg.properties.headers ?? {}).map(([k, v]) => [k, String(v)]));
      const raw = msg.content.toString('utf8');
      this.received.push({
        headers,
        raw,
        body: JSON.parse(raw),
        at: Date.now(),
        topic: msg.fields.routingKey,
        messageId: String(msg.properties.messageId),
        persistent: msg.properties.deliveryMode === 2,
      });
      channel.ack(msg);
    });
    this.model = model;
    this.channel = channel;
    return this;
  }

  async reconnect(): Promise<void> {
    await this.stop();
    await this.start();
  }

  async stop(): Promise<void> {
    await this.channel?.close().catch(() => undefined);
    await this.model?.close().catch(() => undefined);
    this.channel = this.model = null;
  }

  of(instanceId: string): Consumed[] {
    return this.received.filter((m) => m.body.instance_id === instanceId);
  }
}

/** Reads what a JetStream stream stores, in the stream's order, for one instance's subjects. */
export async function streamMessages(url: string, stream: string, subjectPrefix: string, instanceId: string, auth: { user?: string; pass?: string } = {}): Promise<Consumed[]> {
  const nc: NatsConnection = await natsConnect({ servers: url.replace(/^nats:\/\//, ''), ...auth, maxReconnectAttempts: 0 });
  try {
    const jsm = await nc.jetstreamManager();
    let info;
    try {
      info = await jsm.streams.info(stream);
    } catch {
      return [];
    }
    const out: Consumed[] = [];
    for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
      const m = await jsm.streams.getMessage(stream, { seq }).catch(() => null);
      if (!m || !m.subject.startsWith(`${subjectPrefix}.${instanceId}.`)) continue;
      const headers: Record<string, string> = {};
      for (const key of m.header?.keys() ?? []) headers[key.toLowerCase()] = m.header?.get(key) ?? '';
      const raw = new TextDecoder().decode(m.data);
      out.push({ headers, raw, body: JSON.parse(raw), at: Date.now(), topic: m.subject, messageId: m.header?.get('Nats-Msg-Id') ?? '' });
    }
    return out;
  } finally {
    await nc.close();
  }
}
