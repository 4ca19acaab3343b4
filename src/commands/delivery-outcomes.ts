import { webhookStream, type WebhookDeliveryEvent } from '../domain/webhook/delivery-events.js';
import type { Clock } from '../infra/clock.js';
import type { EventData, EventStore } from '../infra/eventstore/port.js';
import type { IdGenerator } from '../infra/ids.js';
import type { Logger } from '../infra/logging/logger.js';
import { auditMetadata } from '../domain/audit.js';

/** What the dispatcher tells about a delivery once its new state is saved. */
export interface SettledDelivery {
  _id: string;
  event_id: string;
  instance_id: string;
  state: string;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
}

const FLUSH_MS = 100;
const MAX_PENDING = 10_000;

/**
 * Turns final webhook outcomes into events on `webhook-<instanceId>`, so statistics are a
 * projection of the log like every other read model (rebuildable, checksummed) and auditors see
 * deliveries in the instance's history. Outcomes are gathered for a moment and appended one
 * stream at a time: a burst of deliveries costs a few appends, not one each. The delivery log
 * stays the record of each delivery; an outcome lost in a crash before its append is a statistic
 * short by one, never a delivery lost or repeated.
 */
export class DeliveryOutcomeRecorder {
  private pending = new Map<string, EventData[]>();
  private size = 0;
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: EventStore,
    private readonly ids: IdGenerator,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /** Pending and retrying states are not outcomes: only delivered and failed are counted. */
  settled(delivery: SettledDelivery): void {
    const event = this.outcome(delivery);
    if (!event || this.size >= MAX_PENDING) return;
    const context = { actor: { kind: 'system' as const }, correlationId: delivery._id, causationId: delivery.event_id, instanceId: delivery.instance_id };
    const list = this.pending.get(delivery.instance_id) ?? [];
    list.push({ id: this.ids.uuid(), type: event.type, data: { ...event.data }, metadata: auditMetadata(context, this.clock.now()) });
    this.pending.set(delivery.instance_id, list);
    this.size++;
    if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), FLUSH_MS);
      this.timer.unref();
    }
  }

  /** Appends whatever is gathered; resolves once it is in the log. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.pending;
    this.pending = new Map();
    this.size = 0;
    this.flushing = this.flushing.then(() =>
      Promise.all(
        [...batch].map(([instanceId, events]) =>
          this.store.append(webhookStream(instanceId), events, 'any').catch((err: unknown) => this.logger.warn({ err, instanceId }, 'webhook outcomes not recorded for statistics')),
        ),
      ).then(() => undefined),
    );
    return this.flushing;
  }

  private outcome(d: SettledDelivery): WebhookDeliveryEvent | null {
    const end = d.delivered_at ? Date.parse(d.delivered_at) : this.clock.now().getTime();
    const base = {
      delivery_id: d._id,
      event_id: d.event_id,
      attempts: d.attempts,
      status_code: d.last_status_code,
      latency_ms: Math.max(0, Math.round(end - Date.parse(d.created_at))) || 0,
    };
    if (d.state === 'delivered') return { type: 'WebhookDelivered', data: base };
    if (d.state === 'failed') return { type: 'WebhookDeliveryFailed', data: { ...base, error: d.last_error } };
    return null;
  }
}
