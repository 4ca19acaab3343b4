import type { ClaimFields } from '../infra/doc-claims.js';
import type { Document, DocumentStore } from '../infra/docstore/port.js';

export const BOT_JOBS = 'bot_jobs';

/** What a bot reads for an image without a caption (and for any image when it has no vision). */
export const IMAGE_PLACEHOLDER = '[image]';

/** A contact's image as its message references it: what the media downloader needs to fetch and verify it. */
export interface ImageRef {
  url: string;
  direct_path?: string;
  media_key: string;
  file_enc_sha256?: string;
  file_sha256: string;
  file_length: number;
  mimetype: string;
}

/** One thing a bot must do, recorded by the outbox with its checkpoint. */
export type BotWork =
  /** A contact's message the bot may answer. */
  | { kind: 'message'; message_id: string; text: string; push_name: string; at_ms: number; image?: ImageRef }
  /** A person answered in the chat (phone, helpdesk, API): the conversation pauses. */
  | { kind: 'human'; message_id: string; at_ms: number };

export type BotJobDoc = Document &
  ClaimFields & {
    /** `<event id>:<bot id>` */
    _id: string;
    instance_id: string;
    account_id: string;
    bot_id: string;
    /** The chat: one conversation per bot and chat, its jobs one at a time in log order. */
    jid: string;
    /** `<instance>:<bot>:<jid>`, for finding each lane's head (absent on jobs written before it). */
    lane?: string;
    pos: number;
    state: 'pending' | 'done' | 'skipped' | 'failed';
    attempts: number;
    due_ms: number;
    last_error: string | null;
    finished_ms?: number;
    work: BotWork;
  };

export async function ensureBotJobIndexes(docs: DocumentStore): Promise<void> {
  const jobs = docs.collection(BOT_JOBS);
  await jobs.createIndex({ name: 'pending', keys: { state: 1, pos: 1 }, partialFilterExpression: { state: 'pending' } });
  // One seek per conversation finds its head, however many jobs wait behind another's.
  await jobs.createIndex({ name: 'lane_heads', keys: { state: 1, lane: 1, pos: 1 }, partialFilterExpression: { state: 'pending' } });
  await jobs.createIndex({ name: 'finished', keys: { finished_ms: 1 }, partialFilterExpression: { finished_ms: { $exists: true } } });
}

export const botLane = (instanceId: string, botId: string, jid: string) => `${instanceId}:${botId}:${jid}`;
