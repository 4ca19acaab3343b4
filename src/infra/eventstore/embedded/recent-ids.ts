/**
 * Revisions of the most recently appended event ids, per stream, for recognising retries of
 * appends made with `any` or `stream_exists`. Like EventStoreDB's own cache for ExpectedVersion.Any
 * this is best effort: it is bounded, so a retry older than its window appends again. Appends with
 * an exact expected revision do not depend on it (see append.ts).
 *
 * An entry may name an event that was never committed (its batch aborted) or has since been
 * scavenged; callers therefore check the log before trusting a hit.
 */
export class RecentIds {
  /**
   * Two generations rather than one map evicting its oldest entry at every set (a BoundedMap): a
   * set is then one Map insert, paid by every append in its write transaction, and a generation is
   * dropped whole. The newest `capacity` ids are always remembered, at most twice that in all.
   */
  private current = new Map<string, number>();
  private previous = new Map<string, number>();

  constructor(private readonly capacity: number) {}

  remember(streamId: string, eventId: string, revision: number): void {
    if (this.current.size >= this.capacity) {
      this.previous = this.current;
      this.current = new Map();
    }
    this.current.set(keyOf(streamId, eventId), revision);
  }

  revisionOf(streamId: string, eventId: string): number | undefined {
    const key = keyOf(streamId, eventId);
    return this.current.get(key) ?? this.previous.get(key);
  }
}

/** Length-prefixed, so no stream id and event id pair can collide with another. */
function keyOf(streamId: string, eventId: string): string {
  return `${streamId.length}:${streamId}${eventId}`;
}
