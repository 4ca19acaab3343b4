import { renewalRuleOf, type BillingSettings } from '../billing/index.js';
import type { WebhookChange } from '../domain/instance/instance-decider.js';
import { instanceDecider, type InstanceCommand } from '../domain/instance/instance-decider.js';
import { instanceStream } from '../domain/instance/events.js';
import { randomBytes } from 'node:crypto';
import type { Clock } from '../infra/clock.js';
import type { SecretBox } from '../infra/crypto/secret-box.js';
import { randomToken, tokenHash } from '../infra/crypto/secrets.js';
import type { IdGenerator } from '../infra/ids.js';
import type { CommandHandler } from './command-handler.js';
import type { CommandContext } from '../domain/audit.js';
import type { ReadYourWrites } from './read-your-writes.js';

export interface InstanceCommandsOptions {
  idPrefix: string;
  /** Decimals allowed: tests use seconds. */
  trialDays: number;
  billing: BillingSettings;
}

const DAY_MS = 86_400_000;

const SYSTEM: CommandContext = { actor: { kind: 'system' }, correlationId: 'billing' };

export interface CreateInstanceInput {
  name: string;
  webhook?: string;
  events?: WebhookChange['events'];
  reject_calls: boolean;
  auto_read_messages: boolean;
  labels: Record<string, unknown>;
}

export interface UpdateInstanceInput {
  name: string;
  webhook?: string;
  events?: WebhookChange['events'];
  reject_calls?: boolean;
  auto_read_messages?: boolean;
}

const READ_MODELS = ['instances'];

/** Webhook signing secrets in the Standard Webhooks form: `whsec_` + the base64 key. */
const newWebhookSecret = () => `whsec_${randomBytes(24).toString('base64')}`;

export class InstanceCommands {
  constructor(
    private readonly handler: CommandHandler,
    private readonly rw: ReadYourWrites,
    private readonly ids: IdGenerator,
    private readonly clock: Clock,
    private readonly box: SecretBox,
    private readonly options: InstanceCommandsOptions,
  ) {}

  /** Returns the new id and the instance token, which is shown only once. */
  async create(accountId: string, input: CreateInstanceInput, correlationId: string) {
    const instanceId = `${this.options.idPrefix}${this.ids.alphanumeric(30)}`;
    const token = randomToken('', 24);
    // One instant for both: created_at (the event's time) and the trial end are exactly TRIAL_DAYS apart.
    const now = this.clock.now();
    const expiredAt = new Date(now.getTime() + this.options.trialDays * DAY_MS);
    await this.run(
      instanceId,
      {
        type: 'CreateInstance',
        data: {
          instance_id: instanceId,
          account_id: accountId,
          name: input.name,
          token_hash: tokenHash(token),
          webhook_secret_sealed: this.sealWebhookSecret(instanceId, newWebhookSecret()),
          reject_calls: input.reject_calls,
          auto_read_messages: input.auto_read_messages,
          labels: input.labels,
          expired_at: expiredAt.toISOString(),
          webhook: webhookChange(input.webhook, input.events),
        },
      },
      { actor: { kind: 'account', id: accountId }, correlationId, accountId, instanceId, occurredAt: now },
    );
    return { instanceId, token };
  }

  update(instanceId: string, input: UpdateInstanceInput, context: CommandContext) {
    const { webhook, events, ...rest } = input;
    return this.run(instanceId, { type: 'UpdateInstance', data: { ...rest, webhook: webhookChange(webhook, events) } }, context);
  }

  configureWebhook(instanceId: string, url: string, events: WebhookChange['events'], context: CommandContext) {
    return this.run(instanceId, { type: 'ConfigureWebhook', data: webhookChange(url, events) }, context);
  }

  async rotateToken(instanceId: string, context: CommandContext) {
    const token = randomToken('', 24);
    await this.run(instanceId, { type: 'RotateInstanceToken', data: { token_hash: tokenHash(token) } }, context);
    return token;
  }

  async rotateWebhookSecret(instanceId: string, context: CommandContext) {
    const secret = newWebhookSecret();
    await this.run(instanceId, { type: 'RotateWebhookSecret', data: { webhook_secret_sealed: this.sealWebhookSecret(instanceId, secret) } }, context);
    return secret;
  }

  /** The provider is asked only once the decider has accepted, so a refused change charges nothing. */
  async subscribe(instanceId: string, accountId: string, context: CommandContext) {
    const now = this.clock.now();
    const at = now.toISOString();
    const { state, revision } = await this.check(instanceId, { type: 'Subscribe', data: { at, expired_at: at } });
    const provider = this.options.billing.provider;
    // A lapsed or unpaid subscription must not keep charging beside the new one.
    if (state.billing.subscriptionId) await provider.cancelNow(state.billing.subscriptionId);
    const started = await provider.subscribe({
      accountId,
      instanceId,
      now,
      periodMs: this.options.billing.periodDays * DAY_MS,
      // Keyed by the stream's revision: concurrent requests against one state start one subscription.
      idempotencyKey: `subscribe:${instanceId}:${revision}`,
    });
    const data = { at, expired_at: started.expiredAt.toISOString() };
    const command: InstanceCommand = {
      type: 'Subscribe',
      data: started.subscriptionId === undefined ? data : { ...data, provider_subscription_id: started.subscriptionId },
    };
    await this.run(instanceId, command, { ...context, occurredAt: now });
  }

  async cancel(instanceId: string, context: CommandContext) {
    const now = this.clock.now();
    const command: InstanceCommand = { type: 'CancelInstance', data: { at: now.toISOString() } };
    const { billing } = (await this.check(instanceId, command)).state;
    const provider = this.options.billing.provider;
    if (billing.status === 'ACTIVE') await provider.scheduleCancellation(billing.subscriptionId);
    else if (billing.status === 'PAST_DUE') await provider.cancelNow(billing.subscriptionId);
    await this.run(instanceId, command, { ...context, occurredAt: now });
  }

  async resume(instanceId: string, context: CommandContext) {
    const command: InstanceCommand = { type: 'ResumeSubscription', data: {} };
    const { billing } = (await this.check(instanceId, command)).state;
    await this.options.billing.provider.resume(billing.subscriptionId);
    await this.run(instanceId, command, context);
  }

  /** The timer: appends whatever is due; with several timers on one log, one append wins. */
  reachDueTime(instanceId: string) {
    const at = this.clock.now().toISOString();
    return this.run(instanceId, { type: 'ReachDueTime', data: { at, rule: renewalRuleOf(this.options.billing) } }, SYSTEM);
  }

  /** What the provider reported (its webhook), turned into our events. */
  recordProviderReport(
    instanceId: string,
    command: Extract<InstanceCommand, { type: 'RecordRenewal' | 'RecordPaymentFailure' | 'EndSubscription' | 'RecordCancelAtPeriodEnd' }>,
  ) {
    return this.run(instanceId, command, SYSTEM);
  }

  /** Decides without appending: the refusals come before any call to the provider. */
  private async check(instanceId: string, command: InstanceCommand) {
    const loaded = await this.handler.load(instanceStream(instanceId), instanceDecider);
    instanceDecider.decide(command, loaded.state);
    return loaded;
  }

  /** The secret is bound to its instance, so a sealed value copied elsewhere does not open. */
  sealWebhookSecret(instanceId: string, secret: string): string {
    return this.box.seal(secret, `webhook-secret:${instanceId}`);
  }

  openWebhookSecret(instanceId: string, sealed: string): string {
    return this.box.open(sealed, `webhook-secret:${instanceId}`).toString('utf8');
  }

  private async run(instanceId: string, command: InstanceCommand, context: CommandContext): Promise<void> {
    const { position } = await this.handler.handle(instanceStream(instanceId), instanceDecider, command, {
      ...context,
      instanceId,
    });
    await this.rw.settle(position, READ_MODELS);
  }
}

function webhookChange(url: string | undefined, events: WebhookChange['events']): WebhookChange {
  const change: WebhookChange = {};
  if (url !== undefined) change.url = url;
  if (events !== undefined) change.events = events;
  return change;
}
