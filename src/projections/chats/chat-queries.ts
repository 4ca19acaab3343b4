import type { DocumentStore } from '../../infra/docstore/port.js';
import { CHATS, type ChatDoc } from './chats-projection.js';

export class ChatQueries {
  constructor(private readonly docs: DocumentStore) {}

  /** Pinned first, then newest first; the jid breaks ties so pages never overlap. */
  async page(instanceId: string, page: number, pageSize: number): Promise<{ total: number; chats: ChatDoc[] }> {
    const chats = this.docs.collection<ChatDoc>(CHATS);
    const [total, items] = await Promise.all([
      chats.count({ instance_id: instanceId }),
      chats.find({ instance_id: instanceId }, { sort: { pinned: -1, last_message_timestamp_ms: -1, jid: 1 }, skip: (page - 1) * pageSize, limit: pageSize }),
    ]);
    return { total, chats: items };
  }
}
