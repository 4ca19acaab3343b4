import type { NetworkMessage } from '../../domain/session/events.js';
import type { HelpdeskReplyReceivedData } from '../../domain/helpdesk/events.js';
import type { ClaimFields } from '../../infra/doc-claims.js';
import type { Document, DocumentStore } from '../../infra/docstore/port.js';

export const HELPDESK_JOBS = 'helpdesk_jobs';
export const HELPDESK_LINKS = 'helpdesk_links';



type JobState = 'pending' | 'done' | 'skipped' | 'failed';

/** One thing the bridge must do, recorded by the outbox projection with its checkpoint. */
export type JobWork =
  | { kind: 'to_helpdesk'; message: NetworkMessage; chat_name?: string }
  | { kind: 'to_whatsapp'; reply: HelpdeskReplyReceivedData; event_id: string }
  | { kind: 'seen'; chat: string; message_ids: string[] }
  /** A history sync to import: the event is read back from the log when the job runs. */
  | { kind: 'import'; stream: string; revision: number };

/** With several nodes, a job carries the claim of the node carrying it out (ClaimFields) while it runs. */
export type JobDoc = Document & ClaimFields & {
  _id: string;
  instance_id: string;
  /** Log position of the event it came from: an instance's jobs run in this order. */
  pos: number;
  /**
   * `<lane>:<conversation>` (conversationKey): the jobs that wait behind each other, for finding
   * each conversation's first pending job by an index seek. Absent on jobs written before it
   * (set at start by ensureBridgeIndexes).
   */
  conversation_key?: string;
  state: JobState;
  attempts: number;
  due_ms: number;
  last_error: string | null;
  /** An import's progress, kept as it goes (the configuration shows the sum over its imports). */
  progress?: { contacts: number; messages: number; total: number };
  /** When it was done, skipped or given up (finished jobs are swept after a while; imports stay). */
  finished_ms?: number;
  /** When it first failed: the horizon after which it is given up counts from here. */
  first_failed_ms?: number;
  work: JobWork;
};

/** What the bridge created for a WhatsApp message (or sent for a helpdesk one): the echo guard and reply threading. */
export type LinkDoc = Document & {
  /** `<instance>:<whatsapp message id>` */
  _id: string;
  helpdesk_message_id: number;
  conversation_id: number;
  /** The contact's id in the inbox, which the public API's mark-seen call names. */
  contact_source_id: string;
};

export const linkId = (instanceId: string, waMessageId: string) => `${instanceId}:${waMessageId}`;

/** A lane is an instance's direction: its jobs run in log order, one at a time. */
export const laneOf = (job: Pick<JobDoc, 'instance_id' | 'work'>) => `${job.instance_id}:${job.work.kind === 'to_whatsapp' ? 'out' : 'in'}`;

/** The conversation a job belongs to (the WhatsApp chat, or the helpdesk conversation); null for one that touches them all. */
export function conversationOf(work: JobWork): string | null {
  switch (work.kind) {
    case 'to_whatsapp':
      return `helpdesk:${work.reply.conversation_id}`;
    case 'to_helpdesk':
      return work.message.chat;
    case 'seen':
      return work.chat;
    case 'import':
      return null;
  }
}

/**
 * The lane and conversation: a conversation's jobs wait behind its first. A lane's imports share
 * one key (empty conversation), since only its first pending import matters: it holds the lane.
 */
export const conversationKey = (job: Pick<JobDoc, 'instance_id' | 'work'>) => `${laneOf(job)}:${conversationOf(job.work) ?? ''}`;

export async function ensureBridgeIndexes(docs: DocumentStore): Promise<void> {
  const jobs = docs.collection<JobDoc>(HELPDESK_JOBS);
  await jobs.createIndex({ name: 'pending', keys: { state: 1, pos: 1 }, partialFilterExpression: { state: 'pending' } });
  // One seek per conversation finds its first job, however many jobs wait behind another's.
  await jobs.createIndex({ name: 'conversation_heads', keys: { state: 1, conversation_key: 1, pos: 1 }, partialFilterExpression: { state: 'pending' } });
  // Jobs written before the key: a seek would pass them by.
  for (const job of await jobs.find({ state: 'pending', conversation_key: { $exists: false } })) {
    await jobs.updateOne({ _id: job._id }, { $set: { conversation_key: conversationKey(job) } });
  }
  await jobs.createIndex({ name: 'imports', keys: { instance_id: 1 }, partialFilterExpression: { 'work.kind': 'import' } });
  await jobs.createIndex({ name: 'finished', keys: { finished_ms: 1 }, partialFilterExpression: { finished_ms: { $exists: true } } });
}
