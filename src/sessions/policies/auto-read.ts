import type { Logger } from 'pino';
import type { SessionEvent } from '../../domain/session/events.js';
import type { Clock } from '../../infra/clock.js';
import type { LiveSession, PolicySettings } from './live-session.js';

/**
 * The auto-read policy: once a session's incoming messages are stored, an instance that reads
 * automatically marks them read on the network and records that the account read them itself.
 */
export class AutoRead {
  constructor(
    private readonly settings: PolicySettings,
    private readonly clock: Clock,
    private readonly logger: Pick<Logger, 'warn'>,
  ) {}

  /** Never throws: a failed read is logged, the messages stay unread as on a phone left alone. */
  async react(session: LiveSession, events: readonly SessionEvent[]): Promise<void> {
    const incoming = events.flatMap((e) => (e.type === 'MessageReceived' && e.data.upsert === 'notify' && !e.data.message.from_me ? [e.data.message] : []));
    if (incoming.length === 0) return;
    try {
      const instance = await this.settings.byId(session.instanceId);
      if (!instance?.auto_read_messages) return;
      // One read per chat (and group sender: the network's read receipt names one), as a phone would.
      const batches = new Map<string, { chat: string; sender?: string; ids: string[] }>();
      for (const m of incoming) {
        const sender = m.is_group ? m.sender : undefined;
        const key = `${m.chat} ${sender ?? ''}`;
        const batch = batches.get(key) ?? { chat: m.chat, ...(sender === undefined ? {} : { sender }), ids: [] };
        batch.ids.push(m.id);
        batches.set(key, batch);
      }
      for (const { chat, sender, ids } of batches.values()) {
        const connection = session.isOpen() ? session.connection() : null;
        if (!connection) return;
        await connection.markRead(chat, ids, sender);
        // As chat/markread does: the account read them itself, which the chat list and webhooks show.
        const now = Math.floor(this.clock.now().getTime() / 1000);
        await session.record([
          { type: 'ReceiptReceived', data: { message_ids: ids, chat, sender: session.selfJid() ?? chat, state: 'ReadSelf', timestamp_s: now } },
        ]);
      }
    } catch (err) {
      this.logger.warn({ err, instanceId: session.instanceId }, 'auto-read failed');
    }
  }
}
