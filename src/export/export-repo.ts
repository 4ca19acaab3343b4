import type { DocumentStore, Update, WriteOp } from '../infra/docstore/port.js';
import { EXPORT_CURSORS, EXPORT_OUTBOX, EXPORT_SETTINGS, cursorId, type CursorDoc, type ExportSettingsDoc, type OutboxDoc, type SinkKind } from './documents.js';

/** Every read and write of the export's collections outside the reactor. */
export class ExportRepo {
  constructor(private readonly docs: DocumentStore) {}

  settings(instanceId: string): Promise<ExportSettingsDoc | null> {
    return this.docs.collection<ExportSettingsDoc>(EXPORT_SETTINGS).findOne({ _id: instanceId });
  }

  /** Instances that export now or did (their outbox may still hold entries). */
  async exportingInstances(): Promise<string[]> {
    const docs = await this.docs.collection<ExportSettingsDoc>(EXPORT_SETTINGS).find({ $or: [{ 'events.0': { $exists: true } }, { seq: { $gt: 0 } }] });
    return docs.map((d) => d._id);
  }

  cursors(instanceId: string): Promise<CursorDoc[]> {
    return this.docs.collection<CursorDoc>(EXPORT_CURSORS).find({ instance_id: instanceId });
  }

  async publishedSeq(sink: SinkKind, instanceId: string): Promise<number> {
    return (await this.docs.collection<CursorDoc>(EXPORT_CURSORS).findOne({ _id: cursorId(sink, instanceId) }))?.published_seq ?? 0;
  }

  /** The instance's entries after `afterSeq`, in seq order: a lane's next messages. */
  after(instanceId: string, afterSeq: number, limit: number): Promise<OutboxDoc[]> {
    return this.docs.collection<OutboxDoc>(EXPORT_OUTBOX).find({ instance_id: instanceId, seq: { $gt: afterSeq } }, { sort: { seq: 1 }, limit });
  }

  /**
   * Several instances' entries, each after its own seq, sorted by instance then seq, `limit` in all:
   * the lanes one commit names, read in one query (lane-reads.ts).
   */
  afterMany(instances: readonly { instanceId: string; afterSeq: number }[], limit: number): Promise<OutboxDoc[]> {
    return this.docs
      .collection<OutboxDoc>(EXPORT_OUTBOX)
      .find({ $or: instances.map((i) => ({ instance_id: i.instanceId, seq: { $gt: i.afterSeq } })) }, { sort: { instance_id: 1, seq: 1 }, limit });
  }

  /** Entries recorded after `publishedSeq` (seqs have gaps: events the export does not carry). */
  async waiting(instanceId: string, publishedSeq: number): Promise<number> {
    return this.docs.collection<OutboxDoc>(EXPORT_OUTBOX).count({ instance_id: instanceId, seq: { $gt: publishedSeq } });
  }

  /** The highest seq still in the outbox (null when it holds none of the instance's). */
  async newestSeq(instanceId: string): Promise<number | null> {
    const [newest] = await this.docs.collection<OutboxDoc>(EXPORT_OUTBOX).find({ instance_id: instanceId }, { sort: { seq: -1 }, limit: 1 });
    return newest?.seq ?? null;
  }

  /**
   * Moves a sink's cursor (never back: `$max`, should a node that lost the lane write late) with
   * the error it met, if any, and removes the entries every sink has published (by id: a range
   * delete walks far more of the store), as one batch of ops for the caller to commit.
   */
  progressOps(sink: SinkKind, instanceId: string, publishedSeq: number, error: string | null, nowIso: string, done: readonly string[]): WriteOp[] {
    // An error here is an event passed over (refused for good): counted, and kept after later
    // publishes clear `last_error`, so an operator still sees that something was not exported.
    const skipped: Update = error === null ? {} : { $inc: { skipped: 1 } };
    const lastSkipped: Record<string, unknown> = error === null ? {} : { last_skipped: error, last_skipped_at: nowIso };
    const ops: WriteOp[] = [
      {
        collection: EXPORT_CURSORS,
        op: 'updateOne',
        filter: { _id: cursorId(sink, instanceId) },
        update: {
          $max: { published_seq: publishedSeq },
          $set: { sink, instance_id: instanceId, published_at: nowIso, last_error: error, last_error_at: error === null ? null : nowIso, ...lastSkipped },
          ...skipped,
        },
        upsert: true,
      },
    ];
    if (done.length > 0) ops.push({ collection: EXPORT_OUTBOX, op: 'deleteMany', filter: { _id: { $in: [...done] } } });
    return ops;
  }

  /** Removes whatever every sink has published up to `seq` (a lane gone idle: the few entries left). */
  async prune(instanceId: string, seq: number): Promise<void> {
    await this.docs.collection(EXPORT_OUTBOX).deleteMany({ instance_id: instanceId, seq: { $lte: seq } });
  }

  /** A failure with nothing published: the cursor stays, the error is shown. */
  async failure(sink: SinkKind, instanceId: string, error: string, nowIso: string): Promise<void> {
    await this.docs.collection<CursorDoc>(EXPORT_CURSORS).updateOne(
      { _id: cursorId(sink, instanceId) },
      { $set: { sink, instance_id: instanceId, last_error: error, last_error_at: nowIso }, $setOnInsert: { published_seq: 0, published_at: null } },
      { upsert: true },
    );
  }
}
