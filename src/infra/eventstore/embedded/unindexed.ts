/** Where one event of a stream is in the log. */
export interface StreamEntry {
  revision: number;
  position: number;
}

/**
 * The stream entries of log events not yet written to the stream index, in memory. Appends
 * record here what the index would hold; indexing later writes them in bulk (see indexing.ts).
 * Nothing here is lost in a crash: it is exactly the log after INDEXED_THROUGH, replayed at open.
 *
 * Each stream's entries are a contiguous run of revisions (and increasing positions): entries
 * only ever join at the end and leave from the front (indexed) or the end (an append that failed part-way).
 */
export class UnindexedEvents {
  private readonly byStream = new Map<string, StreamEntry[]>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  add(streamId: string, revision: number, position: number): void {
    let entries = this.byStream.get(streamId);
    if (!entries) {
      entries = [];
      this.byStream.set(streamId, entries);
    }
    entries.push({ revision, position });
    this.count++;
  }

  /** The stream's entries in revision order; empty when everything it has is indexed. */
  entries(streamId: string): readonly StreamEntry[] {
    return this.byStream.get(streamId) ?? [];
  }

  /** The stream's head revision, when it has unindexed events (then it is newer than the index's). */
  head(streamId: string): number | undefined {
    return this.byStream.get(streamId)?.at(-1)?.revision;
  }

  /** Position of `revision` when it is unindexed. */
  positionOf(streamId: string, revision: number): number | undefined {
    const entries = this.byStream.get(streamId);
    const first = entries?.[0];
    if (!entries || !first || revision < first.revision) return undefined;
    return entries[revision - first.revision]?.position;
  }

  streams(): IterableIterator<[string, readonly StreamEntry[]]> {
    return this.byStream.entries();
  }

  /** Forgets entries at or before `position`: they are in the index and visible to readers. */
  dropThrough(position: number): void {
    for (const [streamId, entries] of this.byStream) {
      let keep = 0;
      while (keep < entries.length && (entries[keep] as StreamEntry).position <= position) keep++;
      if (keep === 0) continue;
      this.count -= keep;
      if (keep === entries.length) this.byStream.delete(streamId);
      else entries.splice(0, keep);
    }
  }

  /** Forgets entries after `position`: the undo of an append that failed part-way. */
  dropAfter(position: number): void {
    for (const [streamId, entries] of this.byStream) {
      while (entries.length > 0 && (entries.at(-1) as StreamEntry).position > position) {
        entries.pop();
        this.count--;
      }
      if (entries.length === 0) this.byStream.delete(streamId);
    }
  }
}
