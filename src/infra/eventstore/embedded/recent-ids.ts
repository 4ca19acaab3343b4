import { BoundedMap } from '../../bounded-map.js';

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
  private readonly revisions: BoundedMap<string, number>;

  constructor(capacity: number) {
    this.revisions = new BoundedMap(capacity);
  }

  remember(streamId: string, eventId: string, revision: number): void {
    this.revisions.set(keyOf(streamId, eventId), revision);
  }

  revisionOf(streamId: string, eventId: string): number | undefined {
    return this.revisions.get(keyOf(streamId, eventId));
  }
}

/** Length-prefixed, so no stream id and event id pair can collide with another. */
function keyOf(streamId: string, eventId: string): string {
  return `${streamId.length}:${streamId}${eventId}`;
}
