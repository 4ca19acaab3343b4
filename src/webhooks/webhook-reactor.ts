import { isLapsed, evolveBilling, NO_BILLING } from '../domain/instance/billing.js';
import { InstanceEventSchemas, type InstanceEvent } from '../domain/instance/events.js';
import { BoundedMap } from '../infra/bounded-map.js';
import type { DocumentStore, WriteOp } from '../infra/docstore/port.js';
import { isOneOf, type RecordedEvent } from '../domain/recorded.js';
import type { Logger } from '../infra/logging/logger.js';
import { RENDERED_EVENT_TYPES, webhookTypeOf } from './bodies/render.js';
import { eventBody, eventSeq } from './bodies/body.js';
import {
  HOOKS,
  ensureDeliveryIndexes,
  type DeliveryDoc,
  type HookDoc,
} from './deliveries/documents.js';
import { DeliveryRepo } from './deliveries/delivery-repo.js';
import { saveOp } from './deliveries/outcomes.js';
import type { Projection } from '../projections/projection.js';
import { idOfStream } from '../domain/streams.js';

/** Comfortably more than one runner batch (500), the most a failed commit makes it replay. */
const MEMO_CAPACITY = 5000;

/** A delivery the runner has committed, handed to the dispatcher. */
export type QueuedNotice = DeliveryDoc;

interface Decision {
  ops: WriteOp[];
  queued?: QueuedNotice;
  /** The instance whose webhook settings (URL, events or signing secret) this event changed. */
  changed?: string;
}

/** What one commit told: the deliveries it recorded and the instances whose settings changed. */
export interface CommittedNotices {
  queued: QueuedNotice[];
  changed: string[];
}

const NOTHING: Decision = { ops: [] };

/** Billing events that start or end a lapse (EXPIRED, CANCELED); the hook folds them as settings. */
const LAPSE_EVENT_TYPES = [
  'SubscriptionStarted',
  'SubscriptionRenewed',
  'TrialExpired',
  'SubscriptionExpired',
  'InstanceCanceled',
] satisfies InstanceEvent['type'][];
const LAPSE_EVENTS: ReadonlySet<string> = new Set(LAPSE_EVENT_TYPES);

/** Instance and session streams are both `<kind>-<instanceId>`. */

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
    ...LAPSE_EVENT_TYPES,
    ...RENDERED_EVENT_TYPES,
  ]);

  private hooks = new Map<string, HookDoc>();
  /** Each hook's URL origin (the delivery's host), worked out when the URL is folded in. */
  private hosts = new Map<string, string>();
  /**
   * The decisions made for the most recent events, by event id. The runner re-feeds events from
   * the last checkpoint when a commit fails; the fold has already moved past them, so deciding
   * again would hand out new seqs against later settings. The remembered decision keeps a replay
   * identical to the first pass.
   */
  private readonly memo = new BoundedMap<string, Decision>(MEMO_CAPACITY);
  private applied = -1n;
  /** Decisions with something to report (a delivery, a settings change), in log order, until their commit is. */
  private uncommitted: { position: bigint; decision: Decision }[] = [];

  constructor(
    private readonly logger: Logger,
    /** Told of what each commit recorded, in log order, once per commit. */
    private readonly onCommitted: (notices: CommittedNotices) => void = () => undefined,
  ) {}

  async setup(docs: DocumentStore): Promise<void> {
    await ensureDeliveryIndexes(docs);
    const saved = await docs.collection<HookDoc>(HOOKS).find({});
    // A hook's seq is written with its settings only; the deliveries committed since carry the
    // rest (same batch as the checkpoint), and the retention sweep raises it before it removes any.
    const log = new DeliveryRepo(docs);
    for (const hook of saved) hook.seq = Math.max(hook.seq, await log.lastSeq(hook._id));
    this.hooks = new Map(saved.map((h) => [h._id, h]));
    this.hosts = new Map(saved.map((h) => [h._id, originOf(h.url)]));
    this.memo.clear();
    this.applied = -1n;
    this.uncommitted = [];
  }

  apply(event: RecordedEvent): WriteOp[] {
    const replayed = event.position <= this.applied ? this.memo.get(event.id) : undefined;
    const decision = replayed ?? this.decide(event);
    if (!replayed) {
      if (event.position <= this.applied) this.logger.warn({ eventId: event.id }, 'webhook reactor re-decided an event it no longer remembers');
      this.applied = event.position > this.applied ? event.position : this.applied;
      this.memo.set(event.id, decision);
    }
    // A replay (the runner retrying a failed commit) starts again at or before what is waiting.
    while ((this.uncommitted.at(-1)?.position ?? -1n) >= event.position) this.uncommitted.pop();
    if (decision.queued || decision.changed) this.uncommitted.push({ position: event.position, decision });
    return decision.ops;
  }

  committed(position: bigint): void {
    let n = 0;
    while (n < this.uncommitted.length && (this.uncommitted[n] as { position: bigint }).position <= position) n++;
    if (n === 0) return;
    const notices: CommittedNotices = { queued: [], changed: [] };
    for (const { decision } of this.uncommitted.splice(0, n)) {
      if (decision.queued) notices.queued.push(decision.queued);
      if (decision.changed) notices.changed.push(decision.changed);
    }
    this.onCommitted(notices);
  }

  private decide(event: RecordedEvent): Decision {
    switch (event.type) {
      case 'InstanceCreated': {
        const d = event.data;
        return { ops: [this.save({ _id: d.instance_id, url: '', events: [], secret_sealed: d.webhook_secret_sealed, seq: 0 })], changed: d.instance_id };
      }
      case 'WebhookConfigured': {
        const d = event.data;
        return this.change(idOfStream(event.streamId), { url: d.url, events: d.events });
      }
      case 'WebhookCleared':
        return this.change(idOfStream(event.streamId), { url: '', events: [] });
      case 'WebhookSecretRotated':
        return this.change(idOfStream(event.streamId), { secret_sealed: event.data.webhook_secret_sealed });
      default:
        return LAPSE_EVENTS.has(event.type) && isOneOf(InstanceEventSchemas, event) ? this.lapse(event) : this.deliver(event);
    }
  }

  /** Each of these events sets the status outright, so the billing fold needs no earlier state. */
  private lapse(event: RecordedEvent<InstanceEvent>): Decision {
    const instanceId = idOfStream(event.streamId);
    const hook = this.hooks.get(instanceId);
    const lapsed = isLapsed(evolveBilling(NO_BILLING, event).status);
    if (!hook || (hook.lapsed ?? false) === lapsed) return NOTHING;
    return { ops: [this.save({ ...hook, lapsed })] };
  }

  private change(instanceId: string, fields: Partial<Omit<HookDoc, '_id'>>): Decision {
    const hook = this.hooks.get(instanceId);
    return hook ? { ops: [this.save({ ...hook, ...fields })], changed: instanceId } : NOTHING;
  }

  /**
   * Whole-document writes keyed by _id only: the store applies them without a query engine,
   * which is most of the cost of an update operator (the reactor writes one per delivery).
   */
  private save(hook: HookDoc): WriteOp {
    if (this.hooks.get(hook._id)?.url !== hook.url || !this.hosts.has(hook._id)) this.hosts.set(hook._id, originOf(hook.url));
    this.hooks.set(hook._id, hook);
    return { collection: HOOKS, op: 'replaceOne', filter: { _id: hook._id }, doc: hook, upsert: true };
  }

  private deliver(event: RecordedEvent): Decision {
    const instanceId = idOfStream(event.streamId);
    const hook = this.hooks.get(instanceId);
    if (!hook || hook.lapsed || !hook.url) return NOTHING;
    // The subscription first, by type alone: an event the hook does not take is never rendered.
    const subscribed = webhookTypeOf(event.type);
    if (!subscribed || !(hook.events.includes('All') || hook.events.includes(subscribed))) return NOTHING;
    // The instance's event sequence (the event's place in its session stream), as the realtime
    // stream and the export number it: one seq per event, whichever channel carries it.
    const seq = eventSeq(event);
    let webhook;
    try {
      webhook = eventBody(event, instanceId, seq);
    } catch (err) {
      // One malformed event must not stall every instance's webhooks behind it.
      this.logger.error({ err, eventId: event.id, type: event.type }, 'event could not be rendered as a webhook; skipped');
      return NOTHING;
    }
    if (!webhook) return NOTHING;
    const { type, body, id, createdAt } = webhook;
    const createdMs = Date.parse(createdAt);
    const delivery: DeliveryDoc = {
      _id: id,
      event_id: event.id,
      instance_id: instanceId,
      seq,
      type,
      pos: Number(event.position),
      url: hook.url,
      host: this.hosts.get(instanceId) ?? '',
      body,
      state: 'queued',
      attempts: 0,
      last_status_code: null,
      last_error: null,
      created_at: createdAt,
      delivered_at: null,
      next_attempt_at: createdAt,
      due_ms: createdMs,
      retry_host: null,
      horizon_from_ms: createdMs,
      ...(typeof event.metadata.correlationId === 'string' ? { correlation_id: event.metadata.correlationId } : {}),
    };
    // The seq is not written to the hook here: the delivery carries it and setup reads it back.
    // The hook was a second write per delivery, about a fifth of what the reactor's writes cost.
    this.hooks.set(instanceId, { ...hook, seq: Math.max(hook.seq, seq) });
    return {
      // Keyed by the event id: recording an event again writes the same delivery, not a second one.
      ops: [saveOp(delivery, { upsert: true })],
      queued: delivery,
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
