import { deepFreeze } from '../../deep-freeze.js';
import { outweighs, RECENT_EVENT_BUDGET } from '../../outweighs.js';
import type { RecordedEvent } from '../port.js';
import { toRecordedEvent } from './records.js';
import type { StoredEvent } from './storage.js';

/**
 * The newest log entries as written, so that subscribers following the head (every projection,
 * each on its own subscription) read them from memory instead of each decoding them from LMDB.
 * It holds one contiguous run of positions: appends add at the top (positions are consecutive),
 * a failed append is dropped from the top, the oldest fall off the bottom, and a scavenge
 * empties it. A read it cannot answer whole answers undefined, and the log is read instead.
 *
 * Entries are frozen and made into RecordedEvents once, by the first read of them: every reader
 * (each projection's subscription) gets the same object for a position, so typedEvent's weak map
 * checks an event's schema once instead of once per reader, and the envelope is not rebuilt per
 * reader either (the log decodes a fresh copy per read). Not when added: that is inside the
 * append, on the path of every append of the transaction and of its acknowledgement.
 * Until then an entry is the store's own copy of the event, which nothing else holds or changes.
 */
export class RecentLog {
  private readonly entries = new Map<number, StoredEvent | RecordedEvent>();
  private low = 0;
  private high = -1;

  constructor(private readonly capacity: number) {}

  add(position: number, stored: StoredEvent): void {
    // A large event (a history sync can carry thousands of messages) is not kept: the run starts
    // again after it, and readers get it from the log. Memory stays under capacity x the budget.
    if (outweighs(stored.data, RECENT_EVENT_BUDGET)) {
      this.clear();
      return;
    }
    if (this.entries.size > 0 && position !== this.high + 1) this.clear();
    if (this.entries.size === 0) this.low = position;
    this.entries.set(position, stored);
    this.high = position;
    while (this.entries.size > this.capacity) this.entries.delete(this.low++);
  }

  dropAfter(position: number): void {
    while (this.entries.size > 0 && this.high > position) this.entries.delete(this.high--);
    if (this.entries.size === 0) this.clear();
  }

  clear(): void {
    this.entries.clear();
    this.low = 0;
    this.high = -1;
  }

  /** Entries with after < position <= upTo, at most maxCount; undefined unless all are held. */
  read(after: number, upTo: number, maxCount: number): RecordedEvent[] | undefined {
    if (this.entries.size === 0 || after + 1 < this.low || upTo > this.high) return undefined;
    const events: RecordedEvent[] = [];
    for (let position = after + 1; position <= upTo && events.length < maxCount; position++) {
      events.push(this.recorded(position));
    }
    return events;
  }

  private recorded(position: number): RecordedEvent {
    const entry = this.entries.get(position) as StoredEvent | RecordedEvent;
    if (typeof entry.revision === 'bigint') return entry as RecordedEvent;
    deepFreeze(entry);
    const event = Object.freeze(toRecordedEvent(entry as StoredEvent, position));
    this.entries.set(position, event);
    return event;
  }
}

