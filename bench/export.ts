import { connect as amqpConnect, type ChannelModel } from 'amqplib';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as natsConnect, nanos, StorageType, type NatsConnection } from 'nats';
import { pino } from 'pino';
import type { NetworkMessage } from '../src/domain/session/events.js';
import { createExport } from '../src/export/index.js';
import { systemClock } from '../src/infra/clock.js';
import { loadConfig } from '../src/infra/config/config.js';
import { SecretBox } from '../src/infra/crypto/secret-box.js';
import { EmbeddedDocumentStore } from '../src/infra/docstore/embedded/embedded-document-store.js';
import { EmbeddedEventStore } from '../src/infra/eventstore/embedded/embedded-event-store.js';
import { randomIds } from '../src/infra/ids.js';
import { chatsProjection } from '../src/projections/chats/chats-projection.js';
import { instancesProjection } from '../src/projections/instances/instances-projection.js';
import { ProjectionRunner } from '../src/projections/runner.js';
import { sessionsProjection } from '../src/projections/sessions/sessions-projection.js';
import { SessionRecorder } from '../src/sessions/session-recorder.js';
import { messageEvent } from '../src/webhooks/bodies/message.js';
import { startNats } from '../test/servers/brokers/nats.js';
import { startRabbitMq } from '../test/servers/brokers/rabbitmq.js';
import { percentile, report } from './lib.js';

/**
 * Event export to Debian's rabbitmq-server and nats-server, started here on free ports:
 *
 * - throughput: a backlog of events already in the log and the outbox (the reactor caught up)
 *   published from a cold start, on one instance and over 20, until a consumer of the broker has
 *   every message; against a plain publish loop of the same client to the same server (same body
 *   size, same window of 256 awaiting confirms or acks, persistent), measured just before and just
 *   after (their mean), to the same consumer;
 * - latency at 500 events/s over 20 instances, from the network happening being recorded to the
 *   broker's consumer having the message (publish, confirm and delivery included), with the
 *   instances, sessions and chats read models running beside the export reactor.
 */

const BACKLOG = Number(process.env.BENCH_EXPORT_EVENTS ?? 20_000);
const WINDOW = 256;
const PACED_RATE = 500;
const PACED_MS = Number(process.env.BENCH_EXPORT_PACED_MS ?? 6000);
const TARGET_RATIO = 0.5;
const TARGET_P99_MS = 50;
const EXCHANGE = 'gateway';
const PREFIX = 'gateway';

const epochNow = () => performance.timeOrigin + performance.now();

/** Counts what reaches a consumer of the broker, and times the bodies that carry `t=<epoch ms>`. */
interface Counter {
  count: number;
  latencies: number[];
  reset(): void;
  close(): Promise<void>;
}

function timing(counter: Counter, raw: Buffer): void {
  counter.count++;
  const text = /"conversation":"t=([0-9.]+)"/.exec(raw.toString('utf8'))?.[1];
  if (text) counter.latencies.push(epochNow() - Number(text));
}

async function amqpCounter(url: string): Promise<Counter> {
  const model = await amqpConnect(url);
  const channel = await model.createChannel();
  await channel.assertExchange(EXCHANGE, 'topic', { durable: true });
  const { queue } = await channel.assertQueue('', { exclusive: true });
  await channel.bindQueue(queue, EXCHANGE, '#');
  const counter: Counter = {
    count: 0,
    latencies: [],
    reset() {
      this.count = 0;
      this.latencies = [];
    },
    close: () => model.close(),
  };
  await channel.consume(queue, (m) => m && timing(counter, m.content), { noAck: true });
  return counter;
}

async function natsCounter(url: string): Promise<Counter> {
  const nc = await natsConnect({ servers: url.replace(/^nats:\/\//, '') });
  // The stream as the export creates it, there before the plain loop publishes to it.
  const jsm = await nc.jetstreamManager();
  await jsm.streams.add({ name: 'GATEWAY', subjects: [`${PREFIX}.>`], storage: StorageType.File, duplicate_window: nanos(10 * 60_000) });
  const counter: Counter = {
    count: 0,
    latencies: [],
    reset() {
      this.count = 0;
      this.latencies = [];
    },
    close: () => nc.close(),
  };
  // A plain subscriber gets every message published on the subjects the stream stores.
  nc.subscribe(`${PREFIX}.>`, { callback: (_err, m) => timing(counter, Buffer.from(m.data)) });
  await nc.flush();
  return counter;
}

async function until(what: string, condition: () => boolean, timeoutMs = 300_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`bench: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** The plain loop: the same client publishing `count` bodies in windows of 256, each window confirmed, until the consumer has them all. */
async function plainAmqp(url: string, body: Buffer, count: number, counter: Counter): Promise<number> {
  const model: ChannelModel = await amqpConnect(url);
  const channel = await model.createConfirmChannel();
  await channel.assertExchange(EXCHANGE, 'topic', { durable: true });
  counter.reset();
  const started = performance.now();
  for (let sent = 0; sent < count; ) {
    const n = Math.min(WINDOW, count - sent);
    for (let i = 0; i < n; i++) channel.publish(EXCHANGE, 'plain.Message', body, { persistent: true, messageId: `m${sent + i}`, contentType: 'application/json' });
    await channel.waitForConfirms();
    sent += n;
  }
  await until('the plain AMQP loop consumed', () => counter.count >= count);
  const rate = (count * 1000) / (performance.now() - started);
  await model.close();
  return rate;
}

async function plainNats(url: string, body: Buffer, count: number, counter: Counter): Promise<number> {
  const nc: NatsConnection = await natsConnect({ servers: url.replace(/^nats:\/\//, '') });
  const js = nc.jetstream();
  counter.reset();
  const started = performance.now();
  for (let sent = 0; sent < count; ) {
    const n = Math.min(WINDOW, count - sent);
    await Promise.all(Array.from({ length: n }, (_, i) => js.publish(`${PREFIX}.plain.Message`, body, { msgID: `plain-${started}-${sent + i}`, timeout: 60_000 })));
    sent += n;
  }
  await until('the plain NATS loop consumed', () => counter.count >= count);
  const rate = (count * 1000) / (performance.now() - started);
  await nc.close();
  return rate;
}

interface Pipeline {
  instances: string[];
  happen(instanceId: string): Promise<void>;
  runner: ProjectionRunner;
  events: EmbeddedEventStore;
  startExport(): Promise<void>;
  close(): Promise<void>;
}

/** The gateway's event pipeline on fresh embedded stores, exporting every instance's messages to one broker. */
async function pipeline(env: Record<string, string>, instanceCount: number, withReadModels: boolean): Promise<Pipeline> {
  const dir = await mkdtemp(join(tmpdir(), 'export-bench-'));
  const logger = pino({ level: 'warn' });
  const config = loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'warn', ...env });
  const events = await EmbeddedEventStore.open({ path: join(dir, 'events') });
  const docs = await EmbeddedDocumentStore.open({ path: join(dir, 'docs') });
  const box = new SecretBox(randomBytes(32));
  const exporter = createExport({ docs, clock: systemClock, logger, config, box });
  const readModels = withReadModels ? [instancesProjection, sessionsProjection, chatsProjection] : [];
  const runner = new ProjectionRunner(events, docs, [...readModels, ...exporter.projections], logger);
  const recorder = new SessionRecorder(events, randomIds, systemClock, 'bench', 30);
  await runner.start();
  const instances: string[] = [];
  for (let i = 0; i < instanceCount; i++) {
    const id = `3E${randomIds.alphanumeric(30)}`;
    const metadata = { occurredAt: new Date().toISOString(), instanceId: id };
    const created = {
      instance_id: id,
      account_id: 'bench',
      name: 'bench',
      token_hash: `bench-${id}`,
      webhook_secret_sealed: box.seal(`whsec_${randomBytes(24).toString('base64')}`, `webhook-secret:${id}`),
      reject_calls: false,
      auto_read_messages: false,
      labels: {},
      billing_status: 'TRIALING',
      expired_at: new Date(Date.now() + 86_400_000).toISOString(),
    };
    await events.append(
      `instance-${id}`,
      [
        { id: randomIds.uuid(), type: 'InstanceCreated', data: created, metadata },
        { id: randomIds.uuid(), type: 'ExportConfigured', data: { events: ['Message'] }, metadata },
      ],
      'no_stream',
    );
    instances.push(id);
  }
  let counter = 0;
  return {
    instances,
    runner,
    events,
    happen: async (instanceId) => {
      await recorder.record(instanceId, 'bench', [{ type: 'MessageReceived', data: { message: message(++counter, epochNow()), upsert: 'notify' } }]);
    },
    startExport: () => exporter.start(),
    async close() {
      await exporter.stop();
      await runner.stop();
      await events.close();
      await docs.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function message(n: number, happened: number): NetworkMessage {
  return {
    id: `BENCH${String(n).padStart(12, '0')}`,
    chat: '5511999990000@s.whatsapp.net',
    sender: '5511999990000@s.whatsapp.net',
    from_me: false,
    is_group: false,
    push_name: 'Bench',
    timestamp_s: Math.floor(Date.now() / 1000),
    type: 'text',
    text: `t=${happened}`,
  };
}

/** A backlog of `total` events in the outbox, published from a cold start until the consumer has them all. */
async function backlog(env: Record<string, string>, instanceCount: number, total: number, counter: Counter): Promise<number> {
  const p = await pipeline(env, instanceCount, false);
  try {
    const per = Math.ceil(total / instanceCount);
    for (let i = 0; i < per; i++) await Promise.all(p.instances.map((id) => p.happen(id)));
    if (!(await p.runner.waitFor(await p.events.headPosition(), ['export'], 300_000))) throw new Error('the outbox did not fill');
    await new Promise((r) => setTimeout(r, 1000));
    counter.reset();
    const started = performance.now();
    await p.startExport();
    await until('the export consumed', () => counter.count >= per * instanceCount);
    return (per * instanceCount * 1000) / (performance.now() - started);
  } finally {
    await p.close();
  }
}

/** 500 events/s spread over 20 instances, the read models running too: each message's latency at the consumer. */
async function paced(env: Record<string, string>, counter: Counter): Promise<number[]> {
  const p = await pipeline(env, 20, true);
  try {
    await p.startExport();
    counter.reset();
    const total = Math.round((PACED_RATE * PACED_MS) / 1000);
    const started = performance.now();
    const pending: Promise<void>[] = [];
    for (let i = 0; i < total; i++) {
      const due = started + (i * 1000) / PACED_RATE;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      pending.push(p.happen(p.instances[i % p.instances.length] as string));
    }
    await Promise.all(pending);
    await until('the paced events consumed', () => counter.count >= total);
    return [...counter.latencies].sort((a, b) => a - b);
  } finally {
    await p.close();
  }
}

export async function benchExport(): Promise<void> {
  const sample = Buffer.from(
    JSON.stringify({ id: `evt_${'0'.repeat(32)}`, type: 'Message', instance_id: `3E${'X'.repeat(30)}`, seq: 1, created_at: new Date().toISOString(), event: messageEvent(message(0, 0)) }),
  );
  const [rabbit, nats] = await Promise.all([startRabbitMq(), startNats()]);
  try {
    for (const broker of (process.env.BENCH_EXPORT_BROKERS ?? 'amqp,nats').split(',') as ('amqp' | 'nats')[]) {
      const env: Record<string, string> = broker === 'amqp' ? { EXPORT_AMQP_URL: rabbit.url } : { EXPORT_NATS_URL: nats.url };
      const counter = broker === 'amqp' ? await amqpCounter(rabbit.url) : await natsCounter(nats.url);
      const plain = () => (broker === 'amqp' ? plainAmqp(rabbit.url, sample, BACKLOG, counter) : plainNats(nats.url, sample, BACKLOG, counter));
      const client = broker === 'amqp' ? 'amqplib confirm-channel' : 'nats js.publish';
      try {
        await plain(); // warm-up
        let before = await plain();
        report({ name: `export ${broker}: plain ${client} loop, window ${WINDOW} (baseline)`, value: before, unit: 'msg/s' });
        for (const instances of [1, 20]) {
          const value = await backlog(env, instances, BACKLOG, counter);
          const after = await plain();
          const baseline = (before + after) / 2;
          report({
            name: `export ${broker}: ${BACKLOG} events over ${instances} instance${instances > 1 ? 's' : ''}, from the outbox to the consumer`,
            value,
            unit: 'msg/s',
            baseline: { name: `plain ${client} loop`, value: baseline },
            target: `>= ${TARGET_RATIO}x`,
            met: value >= TARGET_RATIO * baseline,
          });
          before = after;
        }
        const latencies = await paced(env, counter);
        report({ name: `export ${broker}: latency at ${PACED_RATE} events/s over 20 instances, p50`, value: percentile(latencies, 50), unit: 'ms' });
        report({
          name: `export ${broker}: latency at ${PACED_RATE} events/s over 20 instances, p99 (${latencies.length} events)`,
          value: percentile(latencies, 99),
          unit: 'ms',
          target: `< ${TARGET_P99_MS} ms`,
          met: percentile(latencies, 99) < TARGET_P99_MS,
        });
      } finally {
        await counter.close();
      }
    }
  } finally {
    await Promise.all([rabbit.dispose(), nats.dispose()]);
  }
}
