import type { Static } from '@sinclair/typebox';
import type { InstanceEventSchemas } from '../../domain/instance/events.js';
import type { DocumentStore, WriteOp } from '../../infra/docstore/port.js';
import type { RecordedEvent } from '../../infra/eventstore/port.js';
import type { Logger } from '../../infra/logging/logger.js';
import { RENDERED_EVENT_TYPES, renderEvent, webhookTypeOf } from '../../webhooks/bodies/render.js';
import {
  DELIVERIES,
  HOOKS,
  deliveryId,
  ensureDeliveryIndexes,
  type DeliveryDoc,
  type HookDoc,
} from '../../webhooks/deliveries/documents.js';
import { occurredAt, type Projection } from '../projection.js';
import { DecisionMemo } from './decision-memo.js';

type Data<K extends keyof typeof InstanceEventSchemas> = Static<(typeof InstanceEventSchemas)[K]>;

/** Comfortably more than one runner batch (500), the most a failed commit makes it replay. */
const MEMO_CAPACITY = 5000;

export interface QueuedNotice {
  instanceId: string;
  pos: number;
}

interface Decision {
  ops: WriteOp[];
  queued?: QueuedNotice;
}

const NOTHING: Decision = { ops: [] };

/** Instance and session streams are both `<kind>-<instanceId>`. */
const instanceOf = (event: RecordedEvent) => event.streamId.slice(event.streamId.indexOf('-') + 1);

/**
 * The webhook outbox. For each stored event that becomes a webhook, it records a delivery keyed
 * by the event id, using the instance's webhook settings *at that event's position*: it folds
 * InstanceCreated / WebhookConfigured / WebhookCleared / WebhookSecretRotated itself, into its
 * own collection, and commits that fold, the deliveries and the checkpoint in one batch. A
 * replay from any checkpoint therefore makes the same decisions, with the same seqs.
 */
export class WebhookReactor implements Projection {
  readonly name = 'webhooks';
  readonly eventTypes: ReadonlySet<string> = new Set([
    'InstanceCreated',
    'WebhookConfigured',
    'WebhookCleared',
    'WebhookSecretRotated',
    ...RENDERED_EVENT_TYPES,
  ]);

  private hooks = new Map<string, HookDoc>();
  private readonly memo = new DecisionMemo<Decision>(MEMO_CAPACITY);
  private applied = -1n;

  constructor(
    private readonly logger: Logger,
    /** Told of every delivery handed to the runner; it is visible once the runner commits. */
    private readonly onQueued: (notice: QueuedNotice) => void = () => undefined,
  ) {}

  async setup(docs: DocumentStore): Promise<void> {
    await ensureDeliveryIndexes(docs);
    const saved = await docs.collection<HookDoc>(HOOKS).find({});
    this.hooks = new Map(saved.map((h) => [h._id, h]));
    this.memo.clear();
    this.applied = -1n;
  }

  apply(event: RecordedEvent): WriteOp[] {
    const replayed = event.position <= this.applied ? this.memo.get(event.id) : undefined;
    const decision = replayed ?? this.decide(event);
    if (!replayed) {
      if (event.position <= this.applied) this.logger.warn({ eventId: event.id }, 'webhook reactor re-decided an event it no longer remembers');
      this.applied = event.position > this.applied ? event.position : this.applied;
      this.memo.set(event.id, decision);
    }
    if (decision.queued) this.onQueued(decision.queued);
    return decision.ops;
  }

  private decide(event: RecordedEvent): Decision {
    switch (event.type) {
      case 'InstanceCreated': {
        const d = event.data as Data<'InstanceCreated'>;
        const hook: HookDoc = { _id: d.instance_id, url: '', events: [], secret_sealed: d.webhook_secret_sealed, seq: 0 };
        this.hooks.set(hook._id, hook);
        return { ops: [{ collection: HOOKS, op: 'replaceOne', filter: { _id: hook._id }, doc: hook, upsert: true }] };
      }
      case 'WebhookConfigured': {
        const d = event.data as Data<'WebhookConfigured'>;
        return this.change(instanceOf(event), { url: d.url, events: d.events });
      }
      case 'WebhookCleared':
        return this.change(instanceOf(event), { url: '', events: [] });
      case 'WebhookSecretRotated':
        return this.change(instanceOf(event), { secret_sealed: (event.data as Data<'WebhookSecretRotated'>).webhook_secret_sealed });
      default:
        return this.deliver(event);
    }
  }

  private change(instanceId: string, fields: Partial<Omit<HookDoc, '_id'>>): Decision {
    const hook = this.hooks.get(instanceId);
    if (!hook) return NOTHING;
    this.hooks.set(instanceId, { ...hook, ...fields });
    return { ops: [{ collection: HOOKS, op: 'updateOne', filter: { _id: instanceId }, update: { $set: fields } }] };
  }

  private deliver(event: RecordedEvent): Decision {
    const instanceId = instanceOf(event);
    const hook = this.hooks.get(instanceId);
    const type = webhookTypeOf(event.type);
    if (!hook || !hook.url || !type || !(hook.events.includes('All') || hook.events.includes(type))) return NOTHING;
    let rendered;
    try {
      rendered = renderEvent(event.type, event.data);
    } catch (err) {
      // One malformed event must not stall every instance's webhooks behind it.
      this.logger.error({ err, eventId: event.id, type: event.type }, 'event could not be rendered as a webhook; skipped');
      return NOTHING;
    }
    if (!rendered) return NOTHING;

    const seq = hook.seq + 1;
    this.hooks.set(instanceId, { ...hook, seq });
    const id = deliveryId(event.id);
    const createdAt = occurredAt(event);
    const createdMs = Date.parse(createdAt);
    const state = 'state' in rendered ? { state: rendered.state } : {};
    const body = JSON.stringify({ id, type, instance_id: instanceId, seq, created_at: createdAt, event: rendered.event, ...state });
    const delivery: DeliveryDoc = {
      _id: id,
      event_id: event.id,
      instance_id: instanceId,
      seq,
      type,
      pos: Number(event.position),
      url: hook.url,
      host: originOf(hook.url),
      body,
      state: 'queued',
      status: 'pending',
      attempts: 0,
      last_status_code: null,
      last_error: null,
      created_at: createdAt,
      delivered_at: null,
      next_attempt_at: createdAt,
      due_ms: createdMs,
      horizon_from_ms: createdMs,
      rev: 0,
    };
    return {
      ops: [
        // Keyed by event id and insert-only: recording the same event twice changes nothing.
        { collection: DELIVERIES, op: 'updateOne', filter: { _id: id }, update: { $setOnInsert: delivery }, upsert: true },
        { collection: HOOKS, op: 'updateOne', filter: { _id: instanceId }, update: { $set: { seq } } },
      ],
      queued: { instanceId, pos: delivery.pos },
    };
  }
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '';
  }
}
