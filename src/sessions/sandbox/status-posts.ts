import type { SessionEvent } from '../../domain/session/events.js';
import type { Clock } from '../../infra/clock.js';
import type { IdGenerator } from '../../infra/ids.js';
import { unixSeconds } from './addresses.js';
import type { SandboxConnection } from './connection.js';
import { deliverAll } from './messaging.js';
import type { Phones } from './phones.js';
import type { Registry } from './registry.js';
import type { PhoneDoc } from './state.js';

/** Where the network delivers status posts: one broadcast chat, whoever posted. */
export const STATUS_BROADCAST = 'status@broadcast';

/**
 * Status posts (SANDBOX.md, "Behaviours of the real network"): the network hands a phone's post to
 * the linked devices of the phones that have it as a contact, on `status@broadcast`, as a message
 * like any other. Whether the gateway keeps it is the gateway's business (RECEIVE_STATUS).
 */
export class StatusPosts {
  constructor(
    private readonly phones: Phones,
    private readonly registry: Registry,
    private readonly ids: IdGenerator,
    private readonly clock: Clock,
  ) {}

  async post(poster: PhoneDoc, text: string): Promise<{ message_id: string }> {
    const id = `3EB0${this.ids.alphanumeric(16)}`;
    const deliveries: [SandboxConnection, SessionEvent][] = [];
    for (const conn of this.registry.connected()) {
      if (conn.phone === undefined || conn.phone === poster._id || conn.accountId !== poster.account_id) continue;
      const viewer = (await this.phones.byIds([conn.phone])).get(conn.phone);
      // A viewer who blocked the poster sees nothing of theirs.
      if (!viewer?.contacts.includes(poster._id) || viewer.blocked?.includes(poster._id)) continue;
      const message = {
        id,
        chat: STATUS_BROADCAST,
        sender: poster.jid,
        from_me: false,
        is_group: false,
        push_name: poster.push_name,
        timestamp_s: unixSeconds(this.clock.now()),
        type: 'text' as const,
        text,
      };
      deliveries.push([conn, { type: 'MessageReceived', data: { message, upsert: 'notify' } }]);
    }
    await deliverAll(deliveries);
    return { message_id: id };
  }
}
