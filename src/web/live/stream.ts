/**
 * The instance's realtime stream (CONTRACT.md, Realtime stream) as the web app uses it: one
 * WebSocket per open instance page, authenticated by the session cookie (the gateway accepts it
 * from its own origin only), each body acknowledged, reconnected with backoff after a drop and
 * resumed with `after_seq` so nothing that happened meanwhile is lost. Components ask the stream
 * whether it is up: they read by hand only while it is down.
 */

/** A body of the stream: a webhook body of CONTRACT's Webhooks section. */
export interface LiveEvent {
  id: string;
  type: string;
  instance_id: string;
  seq: number;
  created_at: string;
  event: Record<string, unknown>;
  state?: string;
}

/** connecting: first attempt under way; open: events flow; down: between attempts. */
export type LiveState = 'connecting' | 'open' | 'down';

export interface LiveTiming {
  /** First reconnect delay; doubled per failed attempt, with jitter, up to `maxDelayMs`. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** An attempt not open by then is given up (a proxy that holds the upgrade). */
  connectTimeoutMs: number;
  /** Open at least this long before a drop: the next attempt starts from the first delay again. */
  stableMs: number;
}

const TIMING: LiveTiming = { baseDelayMs: 500, maxDelayMs: 30_000, connectTimeoutMs: 8_000, stableMs: 10_000 };

type EventListener = (event: LiveEvent) => void;
/** `resumed`: the stream replays from where the last one stopped, so nothing was missed. */
type StateListener = (state: LiveState, resumed: boolean) => void;

export class LiveStream {
  private ws: WebSocket | null = null;
  /** The last seq received: the `after_seq` of the next connection. */
  private lastSeq: number | null = null;
  private ackTimer: ReturnType<typeof setTimeout> | null = null;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private connectTimer: ReturnType<typeof setTimeout> | null = null;
  private failures = 0;
  private openedAt = 0;
  private stopped = false;
  private current: LiveState = 'connecting';
  private resumed = false;
  private readonly onEvent = new Set<EventListener>();
  private readonly onState = new Set<StateListener>();

  constructor(
    private readonly instanceId: string,
    private readonly timing: LiveTiming = TIMING,
  ) {}

  get state(): LiveState {
    return this.current;
  }

  start(): void {
    this.stopped = false;
    this.connect();
  }

  stop(): void {
    this.stopped = true;
    for (const timer of [this.ackTimer, this.retryTimer, this.connectTimer]) if (timer) clearTimeout(timer);
    this.ws?.close(1000, 'page closed');
    this.ws = null;
  }

  events(listener: EventListener): () => void {
    this.onEvent.add(listener);
    return () => this.onEvent.delete(listener);
  }

  states(listener: StateListener): () => void {
    this.onState.add(listener);
    return () => this.onState.delete(listener);
  }

  private connect(): void {
    if (this.stopped) return;
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const after = this.lastSeq === null ? '' : `?after_seq=${this.lastSeq}`;
    const ws = new WebSocket(`${scheme}//${location.host}/instances/${encodeURIComponent(this.instanceId)}/events/ws${after}`);
    this.ws = ws;
    const resumed = this.lastSeq !== null;
    this.connectTimer = setTimeout(() => ws.close(), this.timing.connectTimeoutMs);
    ws.onopen = () => {
      if (this.connectTimer) clearTimeout(this.connectTimer);
      this.openedAt = Date.now();
      this.resumed = resumed;
      this.set('open');
    };
    ws.onmessage = (message) => this.receive(message.data);
    ws.onclose = () => {
      if (this.connectTimer) clearTimeout(this.connectTimer);
      if (this.ws !== ws || this.stopped) return;
      this.ws = null;
      const wasOpen = this.openedAt > 0;
      if (wasOpen && Date.now() - this.openedAt >= this.timing.stableMs) this.failures = 0;
      this.openedAt = 0;
      this.failures += 1;
      this.set('down');
      this.retryTimer = setTimeout(() => this.connect(), this.delay());
    };
  }

  /** Full jitter over an exponential ceiling: many pages dropped at once do not return at once. */
  private delay(): number {
    const ceiling = Math.min(this.timing.maxDelayMs, this.timing.baseDelayMs * 2 ** Math.min(this.failures - 1, 16));
    return ceiling / 2 + Math.random() * (ceiling / 2);
  }

  private receive(data: unknown): void {
    if (typeof data !== 'string') return;
    let body: unknown;
    try {
      body = JSON.parse(data);
    } catch {
      return;
    }
    if (!isLiveEvent(body)) return;
    // A replay after a reconnect starts after the last seq seen; anything older is a repeat.
    if (this.lastSeq !== null && body.seq <= this.lastSeq) return;
    this.lastSeq = body.seq;
    this.scheduleAck();
    for (const listen of [...this.onEvent]) {
      try {
        listen(body);
      } catch (err) {
        console.error('a live event listener failed', err);
      }
    }
  }

  /** One ack for a burst (a replay sends many bodies at once); well inside the server's window. */
  private scheduleAck(): void {
    if (this.ackTimer) return;
    this.ackTimer = setTimeout(() => {
      this.ackTimer = null;
      if (this.ws?.readyState === WebSocket.OPEN && this.lastSeq !== null) this.ws.send(JSON.stringify({ ack: this.lastSeq }));
    }, 50);
  }

  private set(state: LiveState): void {
    this.current = state;
    for (const listen of [...this.onState]) listen(state, this.resumed);
  }
}

function isLiveEvent(body: unknown): body is LiveEvent {
  if (typeof body !== 'object' || body === null) return false;
  const b = body as Record<string, unknown>;
  return typeof b.id === 'string' && typeof b.type === 'string' && typeof b.seq === 'number' && Number.isInteger(b.seq) && typeof b.event === 'object' && b.event !== null;
}
