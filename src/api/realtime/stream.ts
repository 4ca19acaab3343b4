import type { WebSocket } from 'ws';
import type { WebhookEventName } from '../../domain/events-table.js';
import type { EventStore, RecordedEvent } from '../../infra/eventstore/port.js';
import { typedEvent } from '../../domain/recorded.js';
import type { Logger } from '../../infra/logging/logger.js';
import { eventBody, eventSeq } from '../../webhooks/bodies/body.js';
import { webhookTypeOf } from '../../webhooks/bodies/render.js';

export interface StreamLimits {
  /** Bodies sent and not acknowledged before the stream pauses. */
  window: number;
  /** Bytes queued on the socket before the stream pauses (a client that does not read). */
  highWaterBytes: number;
  /** Events read from the log per read while catching up. */
  readBatch: number;
}

export const DEFAULT_LIMITS: StreamLimits = { window: 256, highWaterBytes: 1 << 20, readBatch: 200 };

/**
 * One realtime stream: an instance's session events as webhook bodies, `seq` being the event's
 * place in the session stream (its revision + 1, so it never changes and a reconnect names it).
 * The log is the buffer: a stream that cannot send (the client acknowledges too slowly or does
 * not read) stops sending and keeps nothing; when it can again it reads from the log where it
 * stopped. Memory per stream is therefore bounded by the window and the socket's high water.
 */
export class RealtimeStream {
  /** The last seq handled (sent, or skipped as not subscribed). */
  private cursor: number;
  private readonly sent: number[] = [];
  private acked = 0;
  private lastProgressMs: number;
  private reading = false;
  private behind = false;
  private closed = false;
  /** Times the socket reached the high water mark and the stream stopped sending (see `pressure`). */
  private pauses = 0;
  /** The most bytes the socket held right after a send. */
  private peakBuffered = 0;

  constructor(
    private readonly ws: WebSocket,
    private readonly instanceId: string,
    private readonly store: EventStore,
    private readonly types: ReadonlySet<WebhookEventName>,
    startAfter: number,
    private readonly limits: StreamLimits,
    private readonly logger: Logger,
    private readonly now: () => number,
  ) {
    this.cursor = startAfter;
    this.lastProgressMs = now();
    ws.on('message', (data) => this.onMessage(data.toString()));
  }

  /** Starts by replaying what the log holds after the cursor (nothing when it is at the head). */
  begin(): void {
    this.behind = true;
    void this.catchUp();
  }

  /** A live event of this instance, in log order. */
  live(event: RecordedEvent): void {
    if (this.closed) return;
    const seq = eventSeq(event);
    if (seq <= this.cursor) return;
    if (this.reading || this.behind || seq !== this.cursor + 1 || this.blocked()) {
      // Not next in line, or no room: the log has it, and catching up reads it from there.
      this.behind = true;
      if (!this.reading && !this.blocked()) void this.catchUp();
      return;
    }
    this.handle(event, seq);
  }

  /** Called now and then: resumes a paused stream, and closes one whose client stopped acknowledging. */
  tick(ackTimeoutMs: number): void {
    if (this.closed) return;
    if (this.sent.length > 0 && this.now() - this.lastProgressMs > ackTimeoutMs) {
      this.close(4008, `no ack for ${Math.round(ackTimeoutMs / 1000)} s`);
      return;
    }
    if (this.behind && !this.reading && !this.blocked()) void this.catchUp();
  }

  /** Bytes the socket holds for this client (the measure of a client that does not read). */
  get buffered(): number {
    return this.ws.bufferedAmount;
  }

  /**
   * How the stream met a client that does not read: the times it stopped at the high water mark,
   * the most the socket held after a send, and the seq it stands at. Measured by the stream
   * itself, so a test needs neither to sample nor to guess how much the kernel's buffers took.
   */
  get pressure(): { pauses: number; peakBuffered: number; cursor: number } {
    return { pauses: this.pauses, peakBuffered: this.peakBuffered, cursor: this.cursor };
  }

  close(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.ws.close(code, reason);
  }

  markClosed(): void {
    this.closed = true;
  }

  private blocked(): boolean {
    return this.sent.length >= this.limits.window || this.ws.bufferedAmount >= this.limits.highWaterBytes;
  }

  private async catchUp(): Promise<void> {
    if (this.reading || this.closed) return;
    this.reading = true;
    try {
      while (!this.closed && !this.blocked()) {
        // A live event arriving while this read is on its way sets `behind` again: the read may
        // have been answered without it, so it is read once more rather than lost.
        this.behind = false;
        const events = await this.store.readStream(`session-${this.instanceId}`, { fromRevision: BigInt(this.cursor), maxCount: this.limits.readBatch });
        for (const event of events) {
          const seq = eventSeq(event);
          if (seq <= this.cursor) continue;
          this.handle(event, seq);
          if (this.blocked()) break;
        }
        if (events.length >= this.limits.readBatch || this.blocked()) this.behind = true;
        // At the head with nothing arrived meanwhile: from here on the live events carry on.
        if (!this.behind) break;
      }
    } catch (err) {
      this.logger.warn({ err, instanceId: this.instanceId }, 'realtime stream could not read the log');
      this.close(1011, 'the log could not be read; reconnect with after_seq');
    } finally {
      this.reading = false;
    }
  }

  private handle(event: RecordedEvent, seq: number): void {
    this.cursor = seq;
    // The subscription first, by type alone: an event the client does not take is never rendered.
    const subscribed = webhookTypeOf(event.type);
    if (!subscribed || !(this.types.has('All') || this.types.has(subscribed))) return;
    let rendered;
    try {
      const typed = typedEvent(event);
      if (!typed.ok) throw new Error(typed.reason);
      rendered = eventBody(typed.event, this.instanceId, seq);
    } catch (err) {
      this.logger.error({ err, eventId: event.id }, 'event could not be rendered for the realtime stream; skipped');
      return;
    }
    if (!rendered) return;
    if (this.sent.length === 0) this.lastProgressMs = this.now();
    this.sent.push(seq);
    this.ws.send(rendered.body);
    const buffered = this.ws.bufferedAmount;
    if (buffered > this.peakBuffered) this.peakBuffered = buffered;
    if (buffered >= this.limits.highWaterBytes) this.pauses++;
  }

  private onMessage(text: string): void {
    let ack: unknown;
    try {
      ack = (JSON.parse(text) as { ack?: unknown }).ack;
    } catch {
      ack = undefined;
    }
    if (typeof ack !== 'number' || !Number.isInteger(ack)) {
      this.close(4400, 'send {"ack": seq}');
      return;
    }
    if (ack <= this.acked) return;
    this.acked = ack;
    let n = 0;
    while (n < this.sent.length && (this.sent[n] as number) <= ack) n++;
    if (n > 0) {
      this.sent.splice(0, n);
      this.lastProgressMs = this.now();
    }
    if (this.behind && !this.reading && !this.blocked()) void this.catchUp();
  }
}
