import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { LiveEvent, LiveStream } from './stream.js';

export interface LiveRead {
  /**
   * Reads what the component shows (and sets it). May answer the keys it now shows, so that an
   * event whose effect is not visible yet (another part of the gateway acts on it a moment
   * later) is read again a few times, not waited for by polling.
   */
  read: () => Promise<ReadonlySet<string> | void>;
  /** Events that change what the component shows. */
  wants: (event: LiveEvent) => boolean;
  /** The key under which an event's effect shows in what `read` answers; none: read once. */
  keyOf?: (event: LiveEvent) => string | undefined;
  /** How often to read while the stream is down, the only time the component polls. */
  fallbackMs: number;
}

/**
 * Delays of the reads that look again for an event's effect, bounded: an event that never shows
 * (a type the webhook does not take) costs two reads, and then it is given up.
 */
const FOLLOW_UPS_MS = [300, 1200];

/**
 * Keeps a component's read current from the stream: it reads on mount, once the stream opens
 * (again after a reconnect that could not resume, to cover the gap), on each event it wants,
 * and on a timer only while the stream is down. Reads never overlap; a read asked for during
 * one runs once after it. `deps`: what else makes it read again (a filter, a page).
 * Answers a function that reads now (after an action of the page itself).
 */
export function useLiveRead(live: LiveStream, spec: LiveRead, deps: unknown[]): () => void {
  const latest = useRef(spec);
  latest.current = spec;
  const reader = useMemo(() => new CoalescedReader(() => latest.current), []);

  useEffect(() => {
    let poll: ReturnType<typeof setInterval> | null = null;
    const stopPolling = () => {
      if (poll) clearInterval(poll);
      poll = null;
    };
    const startPolling = () => {
      if (poll) return;
      reader.run();
      poll = setInterval(() => reader.run(), latest.current.fallbackMs);
    };
    reader.resume();
    if (live.state === 'down') startPolling();
    else reader.run();
    const offStates = live.states((state, resumed) => {
      if (state === 'open') {
        stopPolling();
        if (!resumed) reader.run();
      } else if (state === 'down') startPolling();
    });
    const offEvents = live.events((event) => {
      if (latest.current.wants(event)) reader.expect(event);
    });
    return () => {
      stopPolling();
      offStates();
      offEvents();
      reader.pause();
    };
  }, [live, reader, ...deps]);

  return () => reader.run();
}

class CoalescedReader {
  private running = false;
  private again = false;
  private paused = false;
  /** Keys of events whose effect was not seen yet, with the follow-ups already spent. */
  private readonly awaited = new Map<string, number>();
  private followUp: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly spec: () => LiveRead) {}

  run(): void {
    if (this.paused) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    void this.loop();
  }

  expect(event: LiveEvent): void {
    const key = this.spec().keyOf?.(event);
    if (key !== undefined && !this.awaited.has(key)) this.awaited.set(key, 0);
    this.run();
  }

  pause(): void {
    this.paused = true;
    this.awaited.clear();
    if (this.followUp) clearTimeout(this.followUp);
    this.followUp = null;
  }

  resume(): void {
    this.paused = false;
  }

  private async loop(): Promise<void> {
    try {
      do {
        this.again = false;
        let shown: ReadonlySet<string> | void;
        try {
          shown = await this.spec().read();
        } catch {
          shown = undefined; // the component shows its own error
        }
        if (shown) for (const key of [...this.awaited.keys()]) if (shown.has(key)) this.awaited.delete(key);
      } while (this.again && !this.paused);
    } finally {
      this.running = false;
    }
    this.scheduleFollowUp();
  }

  private scheduleFollowUp(): void {
    if (this.paused || this.followUp || this.awaited.size === 0) return;
    const spent = Math.min(...this.awaited.values());
    for (const [key, n] of this.awaited) {
      if (n >= FOLLOW_UPS_MS.length) this.awaited.delete(key);
      else this.awaited.set(key, n + 1);
    }
    if (spent >= FOLLOW_UPS_MS.length) return;
    this.followUp = setTimeout(() => {
      this.followUp = null;
      this.run();
    }, FOLLOW_UPS_MS[spent]);
  }
}

/** The stream's state, for a page that says whether it is live. */
export function useLiveState(live: LiveStream | null): LiveStream['state'] | null {
  const [state, setState] = useState(live?.state ?? null);
  useEffect(() => {
    if (!live) return;
    setState(live.state);
    return live.states((next) => setState(next));
  }, [live]);
  return state;
}
