/** An entry of a per-instance log: the webhook deliveries, the export outbox. */
interface LaneDoc {
  instance_id: string;
  seq: number;
}

/** What one lane wants from the log: up to `room` entries of its instance after `afterSeq`. */
export interface LaneRead {
  instanceId: string;
  afterSeq: number;
  room: number;
}

/**
 * One query for several instances: each instance's entries after its `afterSeq`, sorted by
 * instance then seq, at most `limit` in all (the instances' rooms together). A store that cannot
 * answer that in one query may read each instance up to its `room` instead: a read is then cut
 * only by the instance's own room, which is what the answers assume of the instance anyway.
 */
export type LanesQuery<D extends LaneDoc> = (instances: readonly LaneRead[], limit: number) => Promise<D[]>;

/**
 * Hands a lane what the query read for it: its entries in seq order (at most its room) and
 * whether the log may hold more after them. Says whether the lane now stands at the last entry
 * handed: only then may the rest of a read the limit cut short be read after it.
 */
type TakeLane<R extends LaneRead, D extends LaneDoc> = (read: R, docs: D[], more: boolean) => boolean;

/**
 * Reads every lane of `reads` in as few queries of the log as the limit allows (one unless a read
 * is cut short), however many lanes; several lanes of one instance (the export's sinks) share its
 * read. What a lane is handed is what a read of its own would have given it, its first `room`
 * entries after its `afterSeq`, or the start of them and `more`; `more` whenever there may be
 * others after what it was handed. `go` false stops
 * between queries (the caller stopped). Throws what the query throws.
 */
export async function readLanes<R extends LaneRead, D extends LaneDoc>(reads: readonly R[], query: LanesQuery<D>, take: TakeLane<R, D>, go: () => boolean = () => true): Promise<void> {
  let pending = reads;
  while (pending.length > 0 && go()) pending = await readOnce(pending, query, take);
}

/**
 * One query for these lanes; answers the lanes it reached and returns the others. The query holds
 * at most the instances' rooms together, sorted by instance: cut short by that limit, the lanes
 * after the last instance it reached, and the rest of that one's rooms, are read by the next query.
 * A lane far ahead of another of its instance may be handed nothing and told there is more: it
 * reads again on its own (the export's sink that is not behind, while the other catches up).
 */
async function readOnce<R extends LaneRead, D extends LaneDoc>(reads: readonly R[], query: LanesQuery<D>, take: TakeLane<R, D>): Promise<R[]> {
  const instances = byInstance(reads);
  const limit = instances.reduce((sum, i) => sum + i.room, 0);
  const all = await query(instances, limit);
  const cut = all.length === limit;
  const reached = all.at(-1)?.instance_id;
  const docsOf = new Map<string, D[]>();
  for (const doc of all) {
    const list = docsOf.get(doc.instance_id);
    if (list) list.push(doc);
    else docsOf.set(doc.instance_id, [doc]);
  }
  const roomOf = new Map(instances.map((i) => [i.instanceId, i.room]));
  const unread: R[] = [];
  for (const read of reads) {
    const { instanceId, room, afterSeq } = read;
    if (cut && reached !== undefined && instanceId > reached) {
      unread.push(read);
      continue;
    }
    const ofInstance = docsOf.get(instanceId) ?? [];
    const mine = ofInstance.filter((d) => d.seq > afterSeq);
    // The instance's read filled its room (a store reading per instance stops there), or the limit cut it.
    const more = mine.length >= room || ofInstance.length >= (roomOf.get(instanceId) as number) || (cut && instanceId === reached);
    const docs = mine.slice(0, room);
    const last = docs.at(-1);
    const standsAtLast = take(read, docs, more);
    // The lane the limit cut: the rest of its room is read with the lanes not reached.
    if (cut && instanceId === reached && last !== undefined && docs.length < room && standsAtLast) unread.push({ ...read, afterSeq: last.seq, room: room - docs.length });
  }
  return unread;
}

/**
 * The instances the reads name, each from its lowest `afterSeq`, with room for each place its lanes
 * stand at (lanes at one place, the usual case, need it once): a lane a little ahead of another of
 * its instance is reached by the same read.
 */
function byInstance(reads: readonly LaneRead[]): LaneRead[] {
  const places = new Map<string, Map<number, number>>();
  for (const { instanceId, afterSeq, room } of reads) {
    const rooms = places.get(instanceId) ?? new Map<number, number>();
    rooms.set(afterSeq, Math.max(rooms.get(afterSeq) ?? 0, room));
    places.set(instanceId, rooms);
  }
  return [...places].map(([instanceId, rooms]) => ({ instanceId, afterSeq: Math.min(...rooms.keys()), room: [...rooms.values()].reduce((a, b) => a + b, 0) }));
}
