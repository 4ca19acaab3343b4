import type { DocumentStore } from '../../infra/docstore/port.js';
import { CHATS, type ChatDoc } from './chats-projection.js';

export class ChatQueries {
  constructor(private readonly docs: DocumentStore) {}

  /**
   * Pinned first, then newest first; the jid breaks ties so pages never overlap. The
   * `instance_order` index has exactly these keys, so a page is a range scan, not a sort.
   */
  async page(instanceId: string, page: number, pageSize: number): Promise<{ total: number; chats: ChatDoc[] }> {
    const chats = this.docs.collection<ChatDoc>(CHATS);
    const [total, items] = await Promise.all([
      chats.count({ instance_id: instanceId }),
      chats.find({ instance_id: instanceId }, { sort: { pinned: -1, last_message_timestamp_ms: -1, jid: 1 }, skip: (page - 1) * pageSize, limit: pageSize }),
    ]);
    return { total, chats: items };
  }

  /** One chat, or null when the account has not seen it. */
  byJid(instanceId: string, jid: string): Promise<ChatDoc | null> {
    return this.docs.collection<ChatDoc>(CHATS).findOne({ _id: `${instanceId}:${jid}` });
  }
}
