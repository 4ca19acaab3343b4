import { BoundedMap } from '../../infra/bounded-map.js';
import type { DocumentStore } from '../../infra/docstore/port.js';
import { CHATS, chatFilter, type ChatDoc } from './chats-projection.js';

/**
 * Changes whenever the chat list may have changed: before and after each write of the chats
 * projection (ProjectionRunner.readVersion), so a count taken while a write lands is not kept.
 */
export type ChatsVersion = () => bigint | string;

const MAX_CACHED_COUNTS = 10_000;

export class ChatQueries {
  /**
   * Counting an instance's chats walks its index entries (10,000 chats: a third of a request).
   * The count is kept until the chats projection commits anything, which is when it can change.
   */
  private readonly counts = new BoundedMap<string, { version: bigint | string; total: Promise<number> }>(MAX_CACHED_COUNTS);

  constructor(
    private readonly docs: DocumentStore,
    private readonly version?: ChatsVersion,
  ) {}

  /**
   * Pinned first, then newest first; the jid breaks ties so pages never overlap. The
   * `instance_order` index has exactly these keys, so a page is a range scan, not a sort.
   */
  async page(instanceId: string, page: number, pageSize: number): Promise<{ total: number; chats: ChatDoc[] }> {
    const chats = this.docs.collection<ChatDoc>(CHATS);
    const [total, items] = await Promise.all([
      this.count(instanceId),
      chats.find({ instance_id: instanceId }, { sort: { pinned: -1, last_message_timestamp_ms: -1, jid: 1 }, skip: (page - 1) * pageSize, limit: pageSize }),
    ]);
    return { total, chats: items };
  }

  /** One chat, or null when the account has not seen it. */
  byJid(instanceId: string, jid: string): Promise<ChatDoc | null> {
    return this.docs.collection<ChatDoc>(CHATS).findOne(chatFilter(instanceId, jid));
  }

  private count(instanceId: string): Promise<number> {
    const version = this.version?.();
    if (version === undefined) return this.docs.collection<ChatDoc>(CHATS).count({ instance_id: instanceId });
    const cached = this.counts.get(instanceId);
    if (cached && cached.version === version) return cached.total;
    // Read under the version seen before counting: a commit meanwhile makes it stale, never wrong.
    const total = this.docs.collection<ChatDoc>(CHATS).count({ instance_id: instanceId });
    this.counts.set(instanceId, { version, total });
    total.catch(() => this.counts.delete(instanceId));
    return total;
  }
}
