import type { DocumentStore } from '../../infra/docstore/port.js';
import { OWN_MESSAGES, OWN_POLL_VOTES, STATUS_RANK, type OwnMessageDoc, type OwnStatus, type PollVoteDoc } from './own-messages-projection.js';

const STATUS_OF = new Map<number, OwnStatus>(Object.entries(STATUS_RANK).map(([s, r]) => [r, s as OwnStatus]));

/** CONTRACT's Message, for the instance's own messages (the part of it this view knows). */
export interface OwnMessage {
  message_id: string;
  chat_jid: string;
  from_me: true;
  timestamp?: string;
  kind: string;
  text?: string;
  caption?: string;
  media?: { mimetype: string; file_length: number; file_name?: string; seconds?: number; voice?: boolean };
  location?: unknown;
  contacts?: unknown;
  poll?: { name: string; selectable_count: number; options: { name: string; votes: number }[] };
  reply_to?: string;
  mentions?: string[];
  edited_at?: string;
  revoked: boolean;
  status: OwnStatus;
  error?: { code?: number; reason: string };
  send_at?: string;
}

export class OwnMessageQueries {
  constructor(private readonly docs: DocumentStore) {}

  async byId(instanceId: string, messageId: string): Promise<OwnMessage | null> {
    const doc = await this.docs.collection<OwnMessageDoc>(OWN_MESSAGES).findOne({ _id: `${instanceId}:${messageId}` });
    if (!doc) return null;
    const m = doc.message;
    const out: OwnMessage = {
      message_id: messageId,
      chat_jid: doc.chat_jid ?? m?.chat ?? '',
      from_me: true,
      kind: m ? (m.type === 'media' && m.media ? m.media.kind : m.type) : 'other',
      revoked: doc.revoked === true,
      status: STATUS_OF.get(doc.status_rank) ?? 'sent',
    };
    if (m) out.timestamp = new Date(m.timestamp_s * 1000).toISOString();
    if (doc.send_at) out.send_at = doc.send_at;
    const text = doc.edited_text ?? (m?.media ? undefined : m?.text);
    if (m?.media) {
      const caption = doc.edited_text ?? m.media.caption;
      if (caption !== undefined) out.caption = caption;
      out.media = { mimetype: m.media.mimetype, file_length: m.media.file_length, ...(m.media.file_name ? { file_name: m.media.file_name } : {}), ...(m.media.seconds !== undefined ? { seconds: m.media.seconds } : {}), ...(m.media.kind === 'audio' ? { voice: m.media.ptt === true } : {}) };
    } else if (text !== undefined) out.text = text;
    if (m?.location) out.location = m.location;
    if (m?.contacts) out.contacts = m.contacts;
    if (m?.poll) {
      const votes = await this.docs.collection<PollVoteDoc>(OWN_POLL_VOTES).find({ instance_id: instanceId, poll_message_id: messageId });
      out.poll = {
        name: m.poll.name,
        selectable_count: m.poll.selectable_count,
        options: m.poll.options.map((name) => ({ name, votes: votes.filter((v) => v.options.includes(name)).length })),
      };
    }
    if (m?.reply_to) out.reply_to = m.reply_to;
    if (m?.mentions) out.mentions = m.mentions;
    if (doc.edited_at) out.edited_at = doc.edited_at;
    if (doc.error) out.error = doc.error;
    return out;
  }
}
