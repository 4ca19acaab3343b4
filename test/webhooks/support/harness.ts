import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../../../src/infra/config/config.js';
import { SecretBox } from '../../../src/infra/crypto/secret-box.js';
import { EmbeddedDocumentStore } from '../../../src/infra/docstore/embedded/embedded-document-store.js';
import { EmbeddedEventStore } from '../../../src/infra/eventstore/embedded/embedded-event-store.js';
import type { EventData } from '../../../src/infra/eventstore/port.js';
import { randomIds } from '../../../src/infra/ids.js';
import { ProjectionRunner } from '../../../src/projections/runner.js';
import { createWebhooks, type WebhookTuning, type Webhooks } from '../../../src/webhooks/index.js';
import type { Clock } from '../../../src/infra/clock.js';
import type { NetworkMessage } from '../../../src/domain/session/events.js';

export const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

/** A clock a test can move; starts at the real time so signatures pass the receiver's tolerance. */
export class FakeClock implements Clock {
  private ms = Date.now();
  now(): Date {
    return new Date(this.ms);
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}

export interface Harness {
  dir: string;
  events: EmbeddedEventStore;
  docs: EmbeddedDocumentStore;
  box: SecretBox;
  webhooks: Webhooks;
  runner: ProjectionRunner;
  /** Creates an instance with a webhook; returns its id and clear secret. */
  instance(url: string, events: string[]): Promise<{ id: string; secret: string }>;
  append(stream: string, type: string, data: Record<string, unknown>): Promise<bigint>;
  message(instanceId: string, text: string, extra?: Partial<NetworkMessage>): Promise<string>;
  /** Stops the dispatcher and the runner (not the stores): a "restart" starts new ones on them. */
  halt(): Promise<void>;
  restart(tuning?: WebhookTuning): Promise<void>;
  close(): Promise<void>;
}

export async function openHarness(env: Record<string, string> = {}, tuning: WebhookTuning = {}, clock?: Clock): Promise<Harness> {
  const dir = await mkdtemp(join(tmpdir(), 'webhooks-test-'));
  const config = loadConfig({ DATA_DIR: dir, ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_RETRY_BASE_MS: '20', WEBHOOK_RETRY_MAX_MS: '200', ...env });
  const events = await EmbeddedEventStore.open({ path: join(dir, 'events') });
  const docs = await EmbeddedDocumentStore.open({ path: join(dir, 'docs') });
  const box = new SecretBox(randomBytes(32));
  const theClock = clock ?? { now: () => new Date() };
  let seqMs = Date.now();

  const build = async (t: WebhookTuning) => {
    const webhooks = createWebhooks(
      { docs, clock: theClock, logger, config, box },
      t,
    );
    const runner = new ProjectionRunner(events, docs, webhooks.projections, logger);
    await runner.start();
    await webhooks.start();
    return { webhooks, runner };
  };

  const append = async (stream: string, type: string, data: Record<string, unknown>) => {
    const event: EventData = {
      id: randomUUID(),
      type,
      data,
      metadata: { occurredAt: new Date(theClock.now().getTime()).toISOString(), instanceId: stream.slice(stream.indexOf('-') + 1) },
    };
    return (await events.append(stream, [event], 'any')).position;
  };

  const harness: Harness = {
    dir,
    events,
    docs,
    box,
    ...(await build(tuning)),
    async instance(url, subscribed) {
      const id = `3E${randomIds.alphanumeric(30)}`;
      const secret = `whsec_${randomBytes(24).toString('base64')}`;
      await append(`instance-${id}`, 'InstanceCreated', {
        instance_id: id,
        account_id: 'acc',
        name: 'test',
        token_hash: 'x',
        webhook_secret_sealed: box.seal(secret, `webhook-secret:${id}`),
        reject_calls: false,
        auto_read_messages: false,
        labels: {},
        billing_status: 'TRIALING',
        expired_at: new Date().toISOString(),
      });
      if (url) await append(`instance-${id}`, 'WebhookConfigured', { url, events: subscribed });
      return { id, secret };
    },
    append,
    async message(instanceId, text, extra = {}) {
      const id = `MSG${randomIds.alphanumeric(16)}`;
      seqMs += 1000;
      const message: NetworkMessage = {
        id,
        chat: '5511999990000@s.whatsapp.net',
        sender: '5511999990000@s.whatsapp.net',
        from_me: false,
        is_group: false,
        push_name: 'Alice',
        timestamp_s: Math.floor(seqMs / 1000),
        type: 'text',
        text,
        ...extra,
      };
      await append(`session-${instanceId}`, 'MessageReceived', { message, upsert: 'notify' });
      return id;
    },
    async halt() {
      await harness.webhooks.stop();
      await harness.runner.stop();
    },
    async restart(t = tuning) {
      Object.assign(harness, await build(t));
    },
    async close() {
      await harness.halt();
      await events.close();
      await docs.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
  return harness;
}
