import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Clock } from '../../infra/clock.js';
import type { DocumentStore } from '../../infra/docstore/port.js';
import type { Logger } from '../../infra/logging/logger.js';
import { repeat } from '../../infra/repeat.js';
import { MESSAGES, type MessageDoc } from './message-doc.js';

const DAY_MS = 86_400_000;

export interface MessageRetentionOptions {
  docs: DocumentStore;
  clock: Clock;
  logger: Logger;
  /** SESSION_RETENTION_DAYS: a message's text, caption and media live no longer than the log keeps them. */
  retentionDays: number;
  intervalMs: number;
  /** Messages changed per store call, so a sweep never holds the store for long. */
  batch: number;
}

/**
 * Drops the contents (text, caption, media and their search words) of messages older than the
 * session retention, as CONTRACT says; who wrote what when, receipts, reactions and votes stay.
 * Runs on every node: what it writes is the same whoever writes it, and a projection replaying a
 * message past retention cannot happen (the log no longer has it).
 */
export class MessageRetention {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | null = null;

  constructor(private readonly options: MessageRetentionOptions) {}

  start(): void {
    this.timer ??= repeat(
      this.options.intervalMs,
      () => this.sweep(),
      (err) => this.options.logger.error({ err }, 'message retention sweep failed; the next one tries again'),
    );
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
  }

  /** One sweep now; a call during a sweep shares it. Answers how many messages lost their contents. */
  sweep(): Promise<number> {
    this.running ??= this.pass().finally(() => (this.running = null));
    return this.running;
  }

  private async pass(): Promise<number> {
    const cutoff = this.options.clock.now().getTime() - this.options.retentionDays * DAY_MS;
    const messages = this.options.docs.collection<MessageDoc>(MESSAGES);
    let dropped = 0;
    for (;;) {
      const expired = await messages.find({ contents: true, timestamp_ms: { $lt: cutoff } }, { sort: { timestamp_ms: 1 }, limit: this.options.batch });
      if (expired.length === 0) break;
      await messages.updateMany({ _id: { $in: expired.map((m) => m._id) } }, { $unset: { text: '', caption: '', edited_text: '', media: '', words: '', contents: '' } });
      dropped += expired.length;
      if (expired.length < this.options.batch) break;
      await nextTurn();
    }
    if (dropped > 0) this.options.logger.info({ dropped, retentionDays: this.options.retentionDays }, 'message contents past retention dropped');
    return dropped;
  }
}
