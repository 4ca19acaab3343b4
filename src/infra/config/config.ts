import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

/** Every setting the gateway reads, with CONTRACT.md's names and defaults. */
const ConfigSchema = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
  HOST: Type.String({ default: '0.0.0.0' }),
  DATA_DIR: Type.String({ default: './data' }),
  EVENTSTORE_URL: Type.Optional(Type.String()),
  MONGODB_URL: Type.Optional(Type.String()),
  MESSAGING_NETWORK: Type.Union([Type.Literal('baileys'), Type.Literal('sandbox')], { default: 'baileys' }),
  PUBLIC_URL: Type.Optional(Type.String()),
  ALLOW_PRIVATE_TARGETS: Type.Boolean({ default: false }),
  /** Behind a reverse proxy: the client address is the one the nearest proxy appends to X-Forwarded-For. */
  TRUST_PROXY: Type.Boolean({ default: false }),
  SIGNUP: Type.Union([Type.Literal('open'), Type.Literal('closed')], { default: 'open' }),
  ID_PREFIX: Type.String({ pattern: '^[0-9A-Za-z]{1,16}$', default: '3E' }),
  /** Billing durations accept decimals (tests use seconds). */
  TRIAL_DAYS: Type.Number({ minimum: 0, maximum: 3650, default: 7 }),
  BILLING_PERIOD_DAYS: Type.Number({ exclusiveMinimum: 0, maximum: 3650, default: 30 }),
  BILLING_GRACE_DAYS: Type.Number({ minimum: 0, maximum: 3650, default: 3 }),
  BILLING_PROVIDER: Type.Union([Type.Literal('none'), Type.Literal('stripe')], { default: 'none' }),
  STRIPE_SECRET_KEY: Type.Optional(Type.String()),
  STRIPE_PRICE_ID: Type.Optional(Type.String()),
  STRIPE_WEBHOOK_SECRET: Type.Optional(Type.String()),
  /** Where the Stripe API answers; tests point it at their Stripe test server. */
  STRIPE_API_BASE: Type.Optional(Type.String()),
  /** Base64 or plain secret for HS256; generated into DATA_DIR when absent. */
  JWT_SECRET: Type.Optional(Type.String({ minLength: 32 })),
  JWT_TTL_SECONDS: Type.Integer({ minimum: 60, maximum: 86400 * 30, default: 3600 }),
  /** log2 of scrypt's N; 15 (32 MiB, ~0.1 s) in production. */
  SCRYPT_LOG_N: Type.Integer({ minimum: 10, maximum: 20, default: 15 }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info' },
  ),
  BODY_LIMIT_BYTES: Type.Integer({ minimum: 1024, default: 1024 * 1024 }),
  SESSION_RETENTION_DAYS: Type.Integer({ minimum: 1, maximum: 3650, default: 30 }),
  /** How long a command waits for its read models before answering. */
  READ_YOUR_WRITES_TIMEOUT_MS: Type.Integer({ minimum: 0, default: 5000 }),
  /**
   * Many nodes (EVENTSTORE_URL and MONGODB_URL both set): how long a node's lease on a session or
   * on the projections lasts unrenewed, so a dead node's share moves within about this long.
   */
  LEASE_TTL_MS: Type.Integer({ minimum: 1000, maximum: 600_000, default: 30_000 }),
  /**
   * Many nodes: this node's internal origin, advertised in its session leases so other nodes
   * forward requests about its sessions here. Unset: http://<HOST, or the hostname when HOST is a
   * wildcard>:<the port listened on>.
   */
  NODE_URL: Type.Optional(Type.String({ pattern: '^https?://[^/@\\s]+/?$' })),
  SHUTDOWN_TIMEOUT_MS: Type.Integer({ minimum: 0, default: 10000 }),
  /** WhatsApp Web client version Baileys announces, `major.minor.patch`; unset = the pinned default. */
  WHATSAPP_VERSION: Type.Optional(Type.String({ pattern: '^[0-9]+\\.[0-9]+\\.[0-9]+$' })),
  /** Deliver status posts (status@broadcast) and newsletters as messages and chats (CONTRACT.md, Webhooks). */
  RECEIVE_STATUS: Type.Boolean({ default: false }),
  /** What a WhatsApp session announces: available (contacts' presence flows, the phone stops notifying) or unavailable. */
  SESSION_PRESENCE: Type.Union([Type.Literal('available'), Type.Literal('unavailable')], { default: 'unavailable' }),
  /** Days of message history the phone is asked to share at pairing (the chats come whole). */
  HISTORY_SYNC_DAYS: Type.Integer({ minimum: 0, maximum: 3650, default: 7 }),
  /** Delay of every sandbox delivery; 0 never sleeps (SANDBOX.md, Determinism). */
  SANDBOX_LATENCY_MS: Type.Integer({ minimum: 0, maximum: 60_000, default: 0 }),
  WEBHOOK_RETRY_BASE_MS: Type.Integer({ minimum: 1, default: 1000 }),
  WEBHOOK_RETRY_MAX_MS: Type.Integer({ minimum: 1, default: 3_600_000 }),
  WEBHOOK_RETRY_HORIZON_S: Type.Integer({ minimum: 1, default: 3 * 86400 }),
  /** First attempts of one instance in flight together (receivers order by seq). */
  WEBHOOK_CONCURRENCY_PER_INSTANCE: Type.Integer({ minimum: 1, maximum: 512, default: 8 }),
  /** True: each instance's first attempts go strictly one after another. */
  WEBHOOK_ORDERED: Type.Boolean({ default: false }),
  /** Attempts one receiver origin gets at once, whichever instances they come from. */
  WEBHOOK_CONCURRENCY_PER_HOST: Type.Integer({ minimum: 1, maximum: 512, default: 64 }),
  /** Event export (CONTRACT.md): RabbitMQ, `amqp://user:pass@host:5672/vhost` (or amqps://); unset = no AMQP export. */
  EXPORT_AMQP_URL: Type.Optional(Type.String()),
  /** The topic exchange the AMQP export publishes to (declared durable when missing). */
  EXPORT_AMQP_EXCHANGE: Type.String({ minLength: 1, maxLength: 255, pattern: '^[A-Za-z0-9_.:-]+$', default: 'gateway' }),
  /** NATS with JetStream, `nats://user:pass@host:4222` (several separated by commas); unset = no NATS export. */
  EXPORT_NATS_URL: Type.Optional(Type.String()),
  /** Subjects are `<prefix>.<instance_id>.<type>`. */
  EXPORT_NATS_SUBJECT_PREFIX: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_-]+(\\.[A-Za-z0-9_-]+)*$', default: 'gateway' }),
  /** The JetStream stream the gateway creates over `<prefix>.>` when missing. */
  EXPORT_NATS_STREAM: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$', default: 'GATEWAY' }),
  /** Longest wait between two tries of a broker that is down or refuses (reconnects and republishing back off up to it). */
  EXPORT_RETRY_MAX_MS: Type.Integer({ minimum: 10, maximum: 600_000, default: 30_000 }),
  /** Bearer token that GET /metrics requires on the API port; unset, /metrics answers 404 there. */
  METRICS_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
  /** Serve /metrics on this port only, without a token (bind it to a private interface). */
  METRICS_PORT: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
  /** Requests per second per account (token bucket, burst twice the rate); over it: 429. */
  RATE_LIMIT_ACCOUNT_PER_S: Type.Number({ exclusiveMinimum: 0, default: 50 }),
  /** Requests per second per instance, on its routes. */
  RATE_LIMIT_INSTANCE_PER_S: Type.Number({ exclusiveMinimum: 0, default: 20 }),
  /** Sends per minute per instance (send pacing); unset: 20 on the real network, unlimited on the sandbox. */
  SEND_RATE_PER_MIN: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 100_000 })),
  /** Up to this much random delay added to each paced gap. */
  SEND_JITTER_MS: Type.Integer({ minimum: 0, maximum: 600_000, default: 1500 }),
  /** Realtime streams (WebSockets) one account may hold open at once. */
  REALTIME_MAX_STREAMS_PER_ACCOUNT: Type.Integer({ minimum: 1, maximum: 10_000, default: 10 }),
  /** Largest media a download route will fetch and decrypt. */
  MEDIA_MAX_BYTES: Type.Integer({ minimum: 1, default: 64 * 1024 * 1024 }),
});

export type Config = Static<typeof ConfigSchema> & { PUBLIC_URL: string };

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Reads config from an env-like record; unknown keys are ignored, bad values fail at start. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(ConfigSchema.properties)) {
    const value = env[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  // TypeBox would turn "1.5" into the integer 1: a setting with a typo is refused, not rounded.
  const notIntegers = Object.entries(raw)
    .filter(([key, value]) => (ConfigSchema.properties as Record<string, { type?: string }>)[key]?.type === 'integer' && !/^[+-]?\d+$/.test(String(value).trim()))
    .map(([key]) => key);
  const converted = Value.Convert(ConfigSchema, Value.Default(ConfigSchema, raw));
  const errors = [...Value.Errors(ConfigSchema, converted)].filter((e) => !notIntegers.includes(e.path.slice(1)));
  if (errors.length > 0 || notIntegers.length > 0) {
    const lines = [...notIntegers.map((key) => `${key}: Expected integer`), ...errors.map((e) => `${e.path.slice(1) || '(root)'}: ${e.message}`)];
    throw new ConfigError(`invalid configuration: ${lines.join('; ')}`);
  }
  const config = converted as Static<typeof ConfigSchema>;
  return { ...config, PUBLIC_URL: (config.PUBLIC_URL ?? `http://localhost:${config.PORT}`).replace(/\/+$/, '') };
}
