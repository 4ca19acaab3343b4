import { isLapsed, evolveBilling, NO_BILLING } from '../domain/instance/billing.js';
import { InstanceEventSchemas, type InstanceEvent } from '../domain/instance/events.js';
import { isOneOf, type RecordedEvent } from '../domain/recorded.js';
import { idOfStream } from '../domain/streams.js';
import { BoundedMap } from '../infra/bounded-map.js';
import type { DocumentStore, WriteOp } from '../infra/docstore/port.js';
import type { Logger } from '../infra/logging/logger.js';
import type { Projection } from '../projections/projection.js';
import { eventBody, eventSeq } from '../webhooks/bodies/body.js';
import { RENDERED_EVENT_TYPES, webhookTypeOf } from '../webhooks/bodies/render.js';
import { EXPORT_CURSORS, EXPORT_OUTBOX, EXPORT_SETTINGS, ensureExportIndexes, type CursorDoc, type ExportSettingsDoc, type OutboxDoc } from './documents.js';

/** More than one runner batch (500), the most a failed commit makes it replay. */
const MEMO_CAPACITY = 5000;

const LAPSE_EVENT_TYPES = ['SubscriptionStarted', 'SubscriptionRenewed', 'TrialExpired', 'SubscriptionExpired', 'InstanceCanceled'] satisfies InstanceEvent['type'][];
const LAPSE_EVENTS: ReadonlySet<string> = new Set(LAPSE_EVENT_TYPES);

interface Decision {
  ops: WriteOp[];
  /** The instance whose outbox gained an entry. */
  recorded?: string;
  /** The instance whose settings (events, signing secret) this event changed. */
  changed?: string;
}

/** What one commit told: instances with new outbox entries, instances whose settings changed. */
export interface ExportNotices {
  recorded: string[];
  changed: string[];
}

const NOTHING: Decision = { ops: [] };

/**
 * The export outbox, fed from the log like the webhook outbox (webhook-reactor.ts): for each stored
 * event an instance exports, it records the webhook body with the export's next `seq`, using the
 * settings *at that event's position* (folded here from InstanceCreated, ExportConfigured,
 * ExportCleared, WebhookSecretRotated and the billing lapses), and commits the fold, the entries
 * and the checkpoint in one batch: a replay from any checkpoint makes the same decisions.
 *
 * `recording` false (the gateway runs with no broker configured): settings are still folded, so
 * the routes answer, but nothing is queued for a broker that does not exist.
 */
export class ExportReactor implements Projection {
  readonly name = 'export';
  readonly eventTypes: ReadonlySet<string> = new Set([
    'InstanceCreated',
    'ExportConfigured',
    'ExportCleared',
    'WebhookSecretRotated',
    ...LAPSE_EVENT_TYPES,
    ...RENDERED_EVENT_TYPES,
  ]);

  private settings = new Map<string, ExportSettingsDoc>();
  /** Decisions for the latest events by id: a replay after a failed commit decides nothing anew (see WebhookReactor). */
  private readonly memo = new BoundedMap<string, Decision>(MEMO_CAPACITY);
  private applied = -1n;
  private uncommitted: { position: bigint; decision: Decision }[] = [];

  constructor(
    private readonly logger: Logger,
    private readonly recording: boolean,
    private readonly onCommitted: (notices: ExportNotices) => void = () => undefined,
  ) {}

  async setup(docs: DocumentStore): Promise<void> {
    await ensureExportIndexes(docs);
    const saved = await docs.collection<ExportSettingsDoc>(EXPORT_SETTINGS).find({});
    // The seq goes on from the highest one handed out: in the outbox, or published and removed from it.
    const outbox = docs.collection<OutboxDoc>(EXPORT_OUTBOX);
    const cursors = docs.collection<CursorDoc>(EXPORT_CURSORS);
    for (const s of saved) {
      if (s.events.length === 0 && s.seq === 0) continue;
      const [newest] = await outbox.find({ instance_id: s._id }, { sort: { seq: -1 }, limit: 1 });
      const published = await cursors.find({ instance_id: s._id });
      s.seq = Math.max(s.seq, newest?.seq ?? 0, ...published.map((c) => c.published_seq));
    }
    this.settings = new Map(saved.map((s) => [s._id, s]));
    this.memo.clear();
    this.applied = -1n;
    this.uncommitted = [];
  }

  apply(event: RecordedEvent): WriteOp[] {
    const replayed = event.position <= this.applied ? this.memo.get(event.id) : undefined;
    const decision = replayed ?? this.decide(event);
    if (!replayed) {
      if (event.position <= this.applied) this.logger.warn({ eventId: event.id }, 'export reactor re-decided an event it no longer remembers');
      this.applied = event.position > this.applied ? event.position : this.applied;
      this.memo.set(event.id, decision);
    }
    while ((this.uncommitted.at(-1)?.position ?? -1n) >= event.position) this.uncommitted.pop();
    if (decision.recorded || decision.changed) this.uncommitted.push({ position: event.position, decision });
    return decision.ops;
  }

  committed(position: bigint): void {
    let n = 0;
    while (n < this.uncommitted.length && (this.uncommitted[n] as { position: bigint }).position <= position) n++;
    if (n === 0) return;
    const recorded = new Set<string>();
    const changed = new Set<string>();
    for (const { decision } of this.uncommitted.splice(0, n)) {
      if (decision.recorded) recorded.add(decision.recorded);
      if (decision.changed) changed.add(decision.changed);
    }
    this.onCommitted({ recorded: [...recorded], changed: [...changed] });
  }

  private decide(event: RecordedEvent): Decision {
    switch (event.type) {
      case 'InstanceCreated': {
        const d = event.data;
        return { ops: [this.save({ _id: d.instance_id, events: [], secret_sealed: d.webhook_secret_sealed, seq: 0 })], changed: d.instance_id };
      }
      case 'ExportConfigured':
        return this.change(idOfStream(event.streamId), { events: event.data.events });
      case 'ExportCleared':
        return this.change(idOfStream(event.streamId), { events: [] });
      case 'WebhookSecretRotated':
        return this.change(idOfStream(event.streamId), { secret_sealed: event.data.webhook_secret_sealed });
      default:
        return LAPSE_EVENTS.has(event.type) && isOneOf(InstanceEventSchemas, event) ? this.lapse(event) : this.record(event);
    }
  }

  private lapse(event: RecordedEvent<InstanceEvent>): Decision {
    const instanceId = idOfStream(event.streamId);
    const current = this.settings.get(instanceId);
    const lapsed = isLapsed(evolveBilling(NO_BILLING, event).status);
    if (!current || (current.lapsed ?? false) === lapsed) return NOTHING;
    return { ops: [this.save({ ...current, lapsed })], changed: instanceId };
  }

  private change(instanceId: string, fields: Partial<Omit<ExportSettingsDoc, '_id'>>): Decision {
    const current = this.settings.get(instanceId);
    return current ? { ops: [this.save({ ...current, ...fields })], changed: instanceId } : NOTHING;
  }

  private save(doc: ExportSettingsDoc): WriteOp {
    this.settings.set(doc._id, doc);
    return { collection: EXPORT_SETTINGS, op: 'replaceOne', filter: { _id: doc._id }, doc, upsert: true };
  }

  private record(event: RecordedEvent): Decision {
    if (!this.recording) return NOTHING;
    const instanceId = idOfStream(event.streamId);
    const current = this.settings.get(instanceId);
    if (!current || current.lapsed || current.events.length === 0) return NOTHING;
    const type = webhookTypeOf(event.type);
    if (!type || !(current.events.includes('All') || current.events.includes(type))) return NOTHING;
    // The instance's event sequence, as the webhook body and the realtime stream carry it.
    const seq = eventSeq(event);
    let rendered;
    try {
      rendered = eventBody(event, instanceId, seq);
    } catch (err) {
      // One malformed event must not stall every instance's export behind it.
      this.logger.error({ err, eventId: event.id, type: event.type }, 'event could not be rendered for export; skipped');
      return NOTHING;
    }
    if (!rendered) return NOTHING;
    const entry: OutboxDoc = { _id: rendered.id, instance_id: instanceId, seq, type: rendered.type, body: rendered.body, at_ms: Date.parse(rendered.createdAt) };
    // The seq is not written to the settings here: the entry carries it, and setup reads it back.
    this.settings.set(instanceId, { ...current, seq: Math.max(current.seq, seq) });
    // Keyed by the event id: recording an event again writes the same entry, not a second one.
    return { ops: [{ collection: EXPORT_OUTBOX, op: 'replaceOne', filter: { _id: entry._id }, doc: entry, upsert: true }], recorded: instanceId };
  }
}
