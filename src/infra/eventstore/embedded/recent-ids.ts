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
  private readonly revisions = new Map<string, number>();

  constructor(private readonly capacity: number) {}

  remember(streamId: string, eventId: string, revision: number): void {
    const key = keyOf(streamId, eventId);
    // Re-inserting moves the key to the young end of the Map's insertion order.
    this.revisions.delete(key);
    this.revisions.set(key, revision);
    if (this.revisions.size > this.capacity) {
      const oldest = this.revisions.keys().next();
      if (!oldest.done) this.revisions.delete(oldest.value);
    }
  }

  revisionOf(streamId: string, eventId: string): number | undefined {
    return this.revisions.get(keyOf(streamId, eventId));
  }
}

/** Length-prefixed, so no stream id and event id pair can collide with another. */
function keyOf(streamId: string, eventId: string): string {
  return `${streamId.length}:${streamId}${eventId}`;
}
