import type { SessionEvent } from '../../domain/session/events.js';
import { identityOf } from './messaging.js';
import type { Phones } from './phones.js';
import type { Registry } from './registry.js';
import type { SandboxConnection } from './connection.js';
import { DURABLE, type PhoneDoc, type SandboxState } from './state.js';
import { networkMessage } from './views.js';

/** How often a node looks for messages kept for the accounts connected to it (see `sweep`). */
const SWEEP_MS = 1_000;

/**
 * Messages that reached a phone while its account had no connection that took them: none was
 * open (another node held the session, or the gateway was down), or the one open was ended before
 * their turn (the session handed over to another node). They wait in the shared store
 * (`offline_for`) and go to the account's next connection, in order, once each.
 *
 * With many nodes the message may be kept by one node while the account connects on another just
 * before: each node sweeps for the accounts connected to it every second, so such a message waits
 * a second, never until the next reconnect.
 */
export class OfflineMessages {
  /** One hand-over at a time per connection: a sweep and the connect-time hand-over never both deliver a message. */
  private readonly running = new WeakMap<SandboxConnection, Promise<void>>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly state: SandboxState,
    private readonly phones: Phones,
    private readonly registry: Registry,
  ) {}

  /** Keeps a message for phones whose account did not take it; hands it over at once if one connected meanwhile. */
  async keep(messageId: string, phones: string[]): Promise<void> {
    if (phones.length === 0) return;
    for (const phone of phones) await this.state.messages.updateOne({ _id: messageId }, { $addToSet: { offline_for: phone } }, DURABLE);
    this.startSweeping();
    // Connected while this was written (same node): its own hand-over may have read before the write.
    for (const phone of phones) {
      const conn = this.registry.connectedFor(phone);
      if (conn) void this.handOver(conn, phone).catch(() => undefined);
    }
  }

  /** Delivers what waits for the phone to its connection, after whatever the connection has queued. */
  handOver(conn: SandboxConnection, phone: string | PhoneDoc): Promise<void> {
    this.startSweeping();
    const previous = this.running.get(conn) ?? Promise.resolve();
    const run = previous.then(() => this.deliver(conn, typeof phone === 'string' ? phone : phone._id));
    this.running.set(conn, run.catch(() => undefined));
    return run;
  }

  private async deliver(conn: SandboxConnection, phoneId: string): Promise<void> {
    if (this.registry.connectedFor(phoneId) !== conn) return;
    const waiting = await this.state.messages.find({ offline_for: phoneId }, { sort: { seq: 1 } });
    if (waiting.length === 0) return;
    const senders = await this.phones.byIds([...new Set(waiting.map((m) => m.from))]);
    const events: SessionEvent[] = waiting.map((m) => {
      const from = senders.get(m.from);
      const identity = from ? identityOf(from, m.group !== undefined) : undefined;
      return { type: 'MessageReceived', data: { message: networkMessage(m, phoneId, identity), upsert: 'notify' } };
    });
    // Forgotten only once taken: a connection ended before their turn leaves them for the next one.
    if (!(await conn.deliverTaken(events, { defer: true }))) return;
    await this.state.messages.updateMany({ _id: { $in: waiting.map((m) => m._id) } }, { $pull: { offline_for: phoneId } }, DURABLE);
  }

  /** Started by the first linked connection or kept message: a node that has neither never sweeps. */
  private startSweeping(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.sweep().catch(() => undefined), SWEEP_MS);
    this.timer.unref();
  }

  /** One read for every account connected here: those with something waiting get it. */
  private async sweep(): Promise<void> {
    const connected = this.registry.connected().filter((c) => c.phone !== undefined);
    if (connected.length === 0) return;
    const phones = connected.map((c) => c.phone as string);
    const waiting = await this.state.messages.find({ offline_for: { $in: phones } });
    const due = new Set(waiting.flatMap((m) => m.offline_for ?? []));
    for (const conn of connected) if (due.has(conn.phone as string)) void this.handOver(conn, conn.phone as string).catch(() => undefined);
  }
}
