import type { DocumentStore } from '../../infra/docstore/port.js';
import { BOT_SESSIONS, type BotSessionDoc } from './bot-sessions-projection.js';
import { BOTS, botId, type BotDoc } from './bots-projection.js';

export class BotQueries {
  constructor(private readonly docs: DocumentStore) {}

  byId(instanceId: string, bot: string): Promise<BotDoc | null> {
    return this.docs.collection<BotDoc>(BOTS).findOne({ _id: botId(instanceId, bot) });
  }

  ofInstance(instanceId: string): Promise<BotDoc[]> {
    return this.docs.collection<BotDoc>(BOTS).find({ instance_id: instanceId }, { sort: { bot_id: 1 } });
  }

  sessions(instanceId: string, bot: string, limit: number): Promise<BotSessionDoc[]> {
    return this.docs.collection<BotSessionDoc>(BOT_SESSIONS).find({ instance_id: instanceId, bot_id: bot }, { sort: { last_activity_at: -1 }, limit });
  }

  /** Conversations that may have gone idle: the runner records their expiry. */
  live(limit: number): Promise<BotSessionDoc[]> {
    return this.docs.collection<BotSessionDoc>(BOT_SESSIONS).find({ status: { $in: ['active', 'paused'] } }, { sort: { last_activity_at: 1 }, limit });
  }
}
