import { Type, type Static } from '@sinclair/typebox';
import { WebhookEventNameSchema } from '../events-table.js';

export const instanceStream = (instanceId: string) => `instance-${instanceId}`;

const DateTime = Type.String({ format: 'date-time' });

const InstanceCreated = Type.Object({
  instance_id: Type.String(),
  account_id: Type.String(),
  name: Type.String(),
  token_hash: Type.String(),
  /** Sealed with the server key: the signing secret never enters the log in clear. */
  webhook_secret_sealed: Type.String(),
  reject_calls: Type.Boolean(),
  auto_read_messages: Type.Boolean(),
  labels: Type.Record(Type.String(), Type.Unknown()),
  billing_status: Type.Literal('TRIALING'),
  expired_at: DateTime,
});

const InstanceUpdated = Type.Object({
  name: Type.Optional(Type.String()),
  reject_calls: Type.Optional(Type.Boolean()),
  auto_read_messages: Type.Optional(Type.Boolean()),
});

const WebhookConfigured = Type.Object({
  url: Type.String(),
  events: Type.Array(WebhookEventNameSchema),
});

const WebhookCleared = Type.Object({});

const WebhookSecretRotated = Type.Object({ webhook_secret_sealed: Type.String() });

/** Event export to the gateway's brokers (CONTRACT.md, Event export): the types this instance exports. */
const ExportConfigured = Type.Object({ events: Type.Array(WebhookEventNameSchema, { minItems: 1 }) });

const ExportCleared = Type.Object({});

const InstanceTokenRotated = Type.Object({ token_hash: Type.String() });

const InstanceCanceled = Type.Object({ canceled_at: DateTime });

/** The provider's ids, kept so later changes reach the same subscription; absent with `none`. */
const ProviderSubscription = Type.Optional(Type.String());

const SubscriptionStarted = Type.Object({
  started_at: DateTime,
  /** End of the first paid period. */
  expired_at: DateTime,
  provider_subscription_id: ProviderSubscription,
});

/** A paid renewal; from PAST_DUE it makes the instance ACTIVE again. */
const SubscriptionRenewed = Type.Object({ expired_at: DateTime });

const SubscriptionCancellationScheduled = Type.Object({ cancel_at: DateTime });

const SubscriptionResumed = Type.Object({});

/** A renewal that was not paid: PAST_DUE until paid or until the grace ends. */
const PaymentFailed = Type.Object({ grace_ends_at: DateTime });

const TrialExpired = Type.Object({ expired_at: DateTime });

const SubscriptionExpired = Type.Object({ expired_at: DateTime });

export const InstanceEventSchemas = {
  InstanceCreated,
  InstanceUpdated,
  WebhookConfigured,
  WebhookCleared,
  WebhookSecretRotated,
  ExportConfigured,
  ExportCleared,
  InstanceTokenRotated,
  InstanceCanceled,
  SubscriptionStarted,
  SubscriptionRenewed,
  SubscriptionCancellationScheduled,
  SubscriptionResumed,
  PaymentFailed,
  TrialExpired,
  SubscriptionExpired,
} as const;

type Schemas = typeof InstanceEventSchemas;
export type InstanceEvent = { [K in keyof Schemas]: { type: K; data: Static<Schemas[K]> } }[keyof Schemas];
