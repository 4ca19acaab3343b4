import type { NetworkMessage } from '../../domain/session/events.js';
import type { DocumentStore, WriteOp } from '../../infra/docstore/port.js';
import type { RecordedEvent } from '../../domain/recorded.js';
import { conversationKey, ensureBridgeIndexes, HELPDESK_JOBS, type JobDoc, type JobWork } from './jobs.js';
import { isGroupJid } from '../addresses.js';
import type { Projection } from '../../projections/projection.js';
import { idOfStream } from '../../domain/streams.js';

const BRIDGES = 'helpdesk_bridges';

/** Who the bridge carries for, as of the events folded so far (its own copy, committed with its checkpoint). */
type SyncRef = { event_id: string; stream: string; revision: number; pos: number };
type BridgeDoc = { _id: string; enabled: boolean; ignore_jids: string[]; ignore_groups: boolean; imports: boolean; syncs: SyncRef[] };

/** History syncs remembered per instance, so a helpdesk configured after pairing can still import them. */
const SYNCS_KEPT = 50;

/** Neither status posts nor newsletters are conversations with a person. */
const NOT_A_CONVERSATION = /(@broadcast|@newsletter)$/;

/**
 * The helpdesk bridge's outbox: for each stored event the bridge must act on, a job, recorded in
 * the same commit as the checkpoint. A restart therefore neither loses nor repeats a decision;
 * the bridge worker carries the jobs out, idempotently. It folds the configurations itself, so a
 * replay from any checkpoint decides the same.
 */
export class BridgeOutbox implements Projection {
  readonly name = 'helpdesk-bridge';
  readonly eventTypes: ReadonlySet<string> = new Set([
    'HelpdeskConfigured',
    'HelpdeskRemoved',
    'HelpdeskReplyReceived',
    'MessageReceived',
    'MessageSent',
    'ReceiptReceived',
    'HistorySyncReceived',
  ]);
  private bridges = new Map<string, BridgeDoc>();

  constructor(private readonly onCommitted: () => void = () => undefined) {}

  async setup(docs: DocumentStore): Promise<void> {
    await ensureBridgeIndexes(docs);
    this.bridges = new Map((await docs.collection<BridgeDoc>(BRIDGES).find({})).map((b) => [b._id, b]));
  }

  committed(): void {
    this.onCommitted();
  }

  apply(event: RecordedEvent): WriteOp[] {
    const instanceId = idOfStream(event.streamId);
    switch (event.type) {
      case 'HelpdeskConfigured': {
        const { settings } = event.data;
        const before = this.bridges.get(instanceId);
        const after: BridgeDoc = {
          _id: instanceId,
          enabled: settings.enabled,
          ignore_jids: settings.ignore_jids,
          ignore_groups: settings.ignore_groups,
          imports: settings.import_contacts || settings.import_messages,
          syncs: before?.syncs ?? [],
        };
        // Importing switched on after pairing: the history already synced is imported now.
        const starts = after.enabled && after.imports && !(before?.enabled && before.imports);
        const imports = starts ? after.syncs.flatMap((sync) => this.job(event, instanceId, { kind: 'import', stream: sync.stream, revision: sync.revision }, `${event.id}:${sync.event_id}`, sync.pos)) : [];
        return [...this.save(after), ...imports];
      }
      case 'HelpdeskRemoved': {
        const before = this.bridges.get(instanceId);
        return this.save({ _id: instanceId, enabled: false, ignore_jids: [], ignore_groups: false, imports: false, syncs: before?.syncs ?? [] });
      }
      case 'HelpdeskReplyReceived':
        return this.job(event, instanceId, { kind: 'to_whatsapp', reply: event.data, event_id: event.id });
      case 'MessageReceived': {
        const d = event.data;
        // History ('append') comes in through the import, not as live traffic.
        return d.upsert === 'notify' ? this.message(event, instanceId, d.message) : [];
      }
      case 'MessageSent': {
        const d = event.data;
        // An agent's answer is in the helpdesk already: bridging it back would echo it.
        return d.origin === 'helpdesk' ? [] : this.message(event, instanceId, d.message);
      }
      case 'ReceiptReceived': {
        const d = event.data;
        return d.state === 'Read' && this.carries(instanceId, d.chat) ? this.job(event, instanceId, { kind: 'seen', chat: d.chat, message_ids: d.message_ids }) : [];
      }
      case 'HistorySyncReceived': {
        const bridge = this.bridges.get(instanceId) ?? { _id: instanceId, enabled: false, ignore_jids: [], ignore_groups: false, imports: false, syncs: [] };
        const sync: SyncRef = { event_id: event.id, stream: event.streamId, revision: Number(event.revision), pos: Number(event.position) };
        const saved = this.save({ ...bridge, syncs: [...bridge.syncs, sync].slice(-SYNCS_KEPT) });
        return bridge.enabled && bridge.imports ? [...saved, ...this.job(event, instanceId, { kind: 'import', stream: sync.stream, revision: sync.revision })] : saved;
      }
      default:
        return [];
    }
  }

  private message(event: RecordedEvent, instanceId: string, message: NetworkMessage): WriteOp[] {
    if (!this.carries(instanceId, message.chat) || message.type === 'other') return [];
    return this.job(event, instanceId, { kind: 'to_helpdesk', message });
  }

  private carries(instanceId: string, chat: string): boolean {
    const bridge = this.bridges.get(instanceId);
    if (!bridge?.enabled || NOT_A_CONVERSATION.test(chat)) return false;
    if (bridge.ignore_groups && isGroupJid(chat)) return false;
    return !bridge.ignore_jids.includes(chat);
  }

  private job(event: RecordedEvent, instanceId: string, work: JobWork, id = event.id, pos = Number(event.position)): WriteOp[] {
    const job: JobDoc = { _id: id, instance_id: instanceId, pos, conversation_key: conversationKey({ instance_id: instanceId, work }), state: 'pending', attempts: 0, due_ms: 0, last_error: null, work };
    // Keyed by the event, and written only if absent: recording the same event again (a replay, a
    // rebuild) never brings back a job the bridge has done.
    const { _id, ...fields } = job;
    return [{ collection: HELPDESK_JOBS, op: 'updateOne', filter: { _id }, update: { $setOnInsert: fields }, upsert: true }];
  }

  private save(bridge: BridgeDoc): WriteOp[] {
    this.bridges.set(bridge._id, bridge);
    return [{ collection: BRIDGES, op: 'replaceOne', filter: { _id: bridge._id }, doc: bridge, upsert: true }];
  }
}
