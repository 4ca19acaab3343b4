/**
 * Revisions of the most recently appended event ids, per stream, for recognising retries of
 * appends made with `any` or `stream_exists`. Like EventStoreDB's own cache for ExpectedVersion.Any
 * this is best effort: it is bounded, so a retry older than its window appends again. Appends with
 * an exact expected revision do not depend on it (see append.ts).
 *
 * An entry may name an event that was never committed (its commit failed) or has since been
 * scavenged; callers therefore check the log before trusting a hit.
 */
export class RecentIds {
  /**
   * Two generations rather than one map evicting its oldest entry at every set (a BoundedMap): a
   * remember is then one Map insert, paid by every append, and a generation is dropped whole. The
   * newest `capacity` ids are always remembered, at most twice that in all. Each generation maps
   * stream id, then event id: the ids are the strings the events already hold, where one key per
   * pair would be a new string per append, for the collector to copy and then free.
   */
  private current = new Generation();
  private previous = new Generation();

  constructor(private readonly capacity: number) {}

  remember(streamId: string, eventId: string, revision: number): void {
    if (this.current.size >= this.capacity) {
      this.previous = this.current;
      this.current = new Generation();
    }
    this.current.set(streamId, eventId, revision);
  }

  revisionOf(streamId: string, eventId: string): number | undefined {
    return this.current.get(streamId, eventId) ?? this.previous.get(streamId, eventId);
  }
}

class Generation {
  private readonly streams = new Map<string, Map<string, number>>();
  size = 0;

  set(streamId: string, eventId: string, revision: number): void {
    let ids = this.streams.get(streamId);
    if (!ids) {
      ids = new Map();
      this.streams.set(streamId, ids);
    }
    const before = ids.size;
    ids.set(eventId, revision);
    this.size += ids.size - before;
  }

  get(streamId: string, eventId: string): number | undefined {
    return this.streams.get(streamId)?.get(eventId);
  }
}
