import type { CommandContext } from '../../domain/audit.js';
import { conflict, forbidden, invalidInput, notFound } from '../../domain/errors.js';
import type { NetworkMessage, SessionEvent } from '../../domain/session/events.js';
import type { OutgoingContent } from '../../domain/session/outgoing.js';
import type { Clock } from '../../infra/clock.js';
import type { DocumentStore } from '../../infra/docstore/port.js';
import type { IdGenerator } from '../../infra/ids.js';
import type { LinkPreview } from '../../media/outgoing/link-preview.js';
import type { MediaPreparer, MediaRequest, SendKind } from '../../media/outgoing/prepare-media.js';
import type { InstanceDoc } from '../../projections/instances/instances-projection.js';
import { SCHEDULED_SENDS, type ScheduledSendDoc } from '../../projections/sends/scheduled-sends-projection.js';
import { SEND_QUEUE, type QueuedSendDoc } from '../../projections/sends/send-queue-projection.js';
import { networkCall } from '../../sessions/network-call.js';
import type { NetworkConnection } from '../../sessions/port.js';
import type { SessionManager } from '../../sessions/session-manager.js';
import type { ReadYourWrites } from '../read-your-writes.js';
import { messagesProjection } from '../../projections/messages/messages-projection.js';
import type { SessionRecorder } from '../../sessions/session-recorder.js';
import type { SendPacer } from '../send-pacing/pacer.js';
import { inChat, resolveRecipient, type Groups } from './recipients.js';
import type { SendGate } from './send-gate.js';
import { sendNow } from './send-now.js';

/** What every send route takes besides its content (CONTRACT, "Common options"). */
export interface SendOptions {
  reply_to?: string;
  mentions?: string[];
  delay_ms?: number;
  /** ISO date-time, 10 s to 30 days ahead. */
  send_at?: string;
}

/** What a send answers: `data: {message_id, jid, status, timestamp}` (and what was sent instead, if anything). */
export interface SendAnswer {
  message_id: string;
  jid: string;
  status: 'sent' | 'queued' | 'scheduled';
  timestamp: string;
  fallback?: string;
}

/** Content as a send route gives it: everything but media is final; media is uploaded first. */
export type Draft = Exclude<OutgoingContent, { kind: 'media' | 'forward' }> | { kind: 'upload'; media: SendKind; request: MediaRequest; caption?: string; view_once?: boolean };

const SCHEDULE_MIN_MS = 10_000;
const SCHEDULE_MAX_MS = 30 * 86_400_000;
/** The network's edit window. */
const EDIT_WINDOW_S = 15 * 60;

export interface SendCommandsDeps {
  manager: SessionManager;
  recorder: SessionRecorder;
  clock: Clock;
  ids: IdGenerator;
  docs: DocumentStore;
  media: MediaPreparer;
  groups: Groups;
  gate: SendGate;
  /** A stored message of the session (sent, received or synced), newest first. */
  findMessage: (instanceId: string, messageId: string) => Promise<NetworkMessage | undefined>;
  /** Unpaced when absent. */
  pacer?: SendPacer;
  /** A send answers once its message is in the messages model (a GET of its id right after finds it). */
  readYourWrites?: ReadYourWrites;
  /** Told of a new scheduled send (the worker looks sooner). */
  onScheduled?: () => void;
  /** A text's link preview; none when absent. Never fails: no preview is a text without one. */
  previews?: { of(text: string): Promise<LinkPreview | null> };
}

/**
 * Sending, for the API and for any other caller (bots): one method per concern, each taking the
 * instance, the address (`phone`, as CONTRACT's Chat operations take it) and the content. A send
 * goes out now, waits its turn (send pacing: SendQueued), or waits for its time (send_at:
 * SendScheduled); bad input is refused before anything is uploaded, sent or stored.
 */
export class SendCommands {
  constructor(private readonly d: SendCommandsDeps) {}

  /** Any kind; media is read, checked, converted and uploaded first (its file never stays). */
  async send(instance: InstanceDoc, phone: string, draft: Draft, options: SendOptions, context: CommandContext): Promise<SendAnswer> {
    const sendAt = this.sendAt(options.send_at);
    const connection = this.d.manager.connection(instance._id);
    const to = await networkCall(() => resolveRecipient(connection, phone));
    const common = await this.common(instance, to, options);
    if (draft.kind === 'text' && draft.link_preview !== false && this.d.previews) {
      // Fetched now, once: a queued or scheduled text keeps it in its event.
      const preview = await this.d.previews.of(draft.text).catch(() => null);
      if (preview) return this.dispatch(instance, connection, to, { ...draft, preview, ...common }, sendAt, context);
    }
    if (draft.kind !== 'upload') return this.dispatch(instance, connection, to, { ...draft, ...common } as OutgoingContent, sendAt, context);
    const prepared = await this.d.media.prepare(draft.media, draft.request);
    try {
      const uploaded = await networkCall(() => connection.uploadMedia(prepared.upload));
      const media = draft.caption !== undefined ? { ...uploaded, caption: draft.caption } : uploaded;
      return await this.dispatch(instance, connection, to, { kind: 'media', media, ...(draft.view_once ? { view_once: true } : {}), ...common }, sendAt, context);
    } finally {
      // Not on the answer's path: removing the send's files is the caller's wait for nothing.
      void prepared.done().catch(() => undefined);
    }
  }

  /** A stored message of any chat (media by reference) to `phone`, shown as forwarded. */
  async forward(instance: InstanceDoc, phone: string, messageId: string, options: Pick<SendOptions, 'delay_ms'>, context: CommandContext): Promise<SendAnswer> {
    const original = await this.d.findMessage(instance._id, messageId);
    if (!original || ['reaction', 'edit', 'revoke', 'poll_vote'].includes(original.type)) throw notFound(`message ${messageId} not found`);
    if (original.view_once) throw invalidInput('message_id', 'a view-once message cannot be forwarded');
    const connection = this.d.manager.connection(instance._id);
    const to = await networkCall(() => resolveRecipient(connection, phone));
    const content: OutgoingContent = { kind: 'forward', message: original, ...(options.delay_ms ? { delay_ms: options.delay_ms } : {}) };
    return this.dispatch(instance, connection, to, content, undefined, context);
  }

  /** Edit for everyone: own text or caption, within the network's 15 minutes (409 after). */
  async edit(instance: InstanceDoc, phone: string, messageId: string, text: string, context: CommandContext): Promise<{ message_id: string }> {
    const { connection, chat, original } = await this.target(instance, phone, messageId);
    if (!original.from_me) throw forbidden('only your own messages can be edited');
    const captioned = original.type === 'media' && ['image', 'video', 'document'].includes(original.media?.kind ?? '');
    if (original.type !== 'text' && !captioned) {
      throw invalidInput('message_id', `a ${original.media?.kind ?? original.type} message has no text to edit`);
    }
    const age = Math.floor(this.d.clock.now().getTime() / 1000) - original.timestamp_s;
    if (age > EDIT_WINDOW_S) throw conflict('the network allows edits for 15 minutes after sending; this message is older');
    const message = await networkCall(() => connection.change(chat, { kind: 'edit', message_id: messageId, text }));
    await this.record(instance, [{ type: 'MessageSent', data: { message, origin: 'api' } }], context);
    return { message_id: message.id };
  }

  /** Delete for everyone: own messages; others' only in a group the account administers. */
  async revoke(instance: InstanceDoc, phone: string, messageId: string, context: CommandContext): Promise<{ message_id: string }> {
    const { connection, chat, original } = await this.target(instance, phone, messageId);
    if (!original.from_me) {
      if (!original.is_group) throw forbidden("another person's message can be deleted for everyone only in a group you administer");
      if (!(await this.d.groups.isAdmin(instance._id, original.chat, await this.self(instance)))) throw forbidden('the account is not an admin of this group');
    }
    const participant = original.from_me ? undefined : (original.sender_lid ?? original.sender);
    const change = { kind: 'revoke' as const, message_id: messageId, from_me: original.from_me, ...(participant ? { participant } : {}) };
    const message = await networkCall(() => connection.change(chat, change));
    await this.record(instance, [{ type: 'MessageSent', data: { message, origin: 'api' } }], context);
    return { message_id: message.id };
  }

  /** Typing, recording or paused, shown in the chat (nothing is stored: it is not a message). */
  async presence(instance: InstanceDoc, phone: string, state: 'composing' | 'recording' | 'paused'): Promise<void> {
    const connection = this.d.manager.connection(instance._id);
    const to = await networkCall(() => resolveRecipient(connection, phone));
    await networkCall(() => connection.sendChatPresence(to, state));
  }

  /** A reaction naming the reacted message's author: ours (fromMe) or, in a group, its sender. */
  async react(instance: InstanceDoc, phone: string, messageId: string, reaction: string, context: CommandContext): Promise<{ message_id: string }> {
    const connection = this.d.manager.connection(instance._id);
    const chat = await networkCall(() => resolveRecipient(connection, phone));
    const original = await this.d.findMessage(instance._id, messageId);
    const author = original
      ? { from_me: original.from_me, ...(original.is_group && !original.from_me ? { participant: original.sender_lid ?? original.sender } : {}) }
      : undefined;
    const message = await networkCall(() => connection.react(chat, messageId, reaction, author));
    await this.record(instance, [{ type: 'MessageSent', data: { message, origin: 'api' } }], context);
    return { message_id: message.id };
  }

  /** Calls off a scheduled or queued send; 404 once it has gone out (or was never one). */
  async cancel(instance: InstanceDoc, messageId: string, context: CommandContext): Promise<{ message_id: string }> {
    return this.d.gate.cancel(messageId, async () => {
      const scheduled = this.d.docs.collection<ScheduledSendDoc>(SCHEDULED_SENDS);
      const queued = this.d.docs.collection<QueuedSendDoc>(SEND_QUEUE);
      // Not while another node holds it (it is being sent there).
      const free = { $or: [{ claim_until: { $exists: false } }, { claim_until: { $lte: this.d.clock.now().getTime() } }] };
      for (const [col, was] of [
        [scheduled, 'scheduled'],
        [queued, 'queued'],
      ] as const) {
        const taken = await (col as typeof scheduled).updateOne({ $and: [{ _id: messageId, instance_id: instance._id, state: 'pending' }, free] }, { $set: { state: 'canceled' } }, { durable: true });
        if (taken.matchedCount === 1) {
          if (was === 'queued') this.d.pacer?.dequeued(instance._id, false);
          await this.record(instance, [{ type: 'SendCanceled', data: { message_id: messageId, was } }], context);
          return { message_id: messageId };
        }
      }
      const busy = (await scheduled.findOne({ _id: messageId, instance_id: instance._id, state: 'pending' })) ?? (await queued.findOne({ _id: messageId, instance_id: instance._id, state: 'pending' }));
      if (busy) throw conflict(`message ${messageId} is being sent right now`);
      throw notFound(`no scheduled or queued send ${messageId} (it may have gone out already)`);
    });
  }

  /** Now, queued behind others (pacing), or stored for its time. */
  private async dispatch(instance: InstanceDoc, connection: NetworkConnection, to: string, content: OutgoingContent, sendAt: Date | undefined, context: CommandContext): Promise<SendAnswer> {
    const now = this.d.clock.now();
    if (sendAt) {
      const messageId = this.newId();
      await this.record(instance, [{ type: 'SendScheduled', data: { message_id: messageId, to, content, send_at: sendAt.toISOString() } }], context);
      this.d.onScheduled?.();
      return { message_id: messageId, jid: to, status: 'scheduled', timestamp: sendAt.toISOString() };
    }
    const pacer = this.d.pacer;
    if (pacer && !pacer.tryNow(instance._id)) {
      const messageId = this.newId();
      // Counted before the await, so a send arriving meanwhile queues behind this one.
      pacer.queued(instance._id);
      try {
        await this.record(instance, [{ type: 'SendQueued', data: { message_id: messageId, to, content } }], context);
      } catch (err) {
        pacer.dequeued(instance._id, false);
        throw err;
      }
      return { message_id: messageId, jid: to, status: 'queued', timestamp: now.toISOString() };
    }
    const { message, fallback } = await networkCall(() => sendNow(connection, to, content, undefined));
    await this.record(instance, [{ type: 'MessageSent', data: fallback ? { message, origin: 'api', fallback } : { message, origin: 'api' } }], context);
    const timestamp = new Date(message.timestamp_s * 1000).toISOString();
    return { message_id: message.id, jid: to, status: 'sent', timestamp, ...(fallback ? { fallback } : {}) };
  }

  /** reply_to (a message of that chat), mentions (checked), delay_ms, as the content carries them. */
  private async common(instance: InstanceDoc, to: string, options: SendOptions): Promise<Pick<Extract<OutgoingContent, { kind: 'text' }>, 'reply_to' | 'mentions' | 'delay_ms'>> {
    const out: { reply_to?: string; mentions?: string[]; delay_ms?: number } = {};
    if (options.reply_to !== undefined) {
      const quoted = await this.d.findMessage(instance._id, options.reply_to);
      if (!quoted || !inChat(quoted, to)) throw invalidInput('reply_to', `no message ${options.reply_to} in this chat`);
      out.reply_to = options.reply_to;
    }
    const mentions = await this.d.groups.mentions(instance._id, to, options.mentions, await this.self(instance));
    if (mentions) out.mentions = mentions;
    if (options.delay_ms) out.delay_ms = options.delay_ms;
    return out;
  }

  private sendAt(raw: string | undefined): Date | undefined {
    if (raw === undefined) return undefined;
    const at = new Date(raw);
    if (Number.isNaN(at.getTime())) throw invalidInput('send_at', 'must be a date-time');
    const ahead = at.getTime() - this.d.clock.now().getTime();
    if (ahead < SCHEDULE_MIN_MS) throw invalidInput('send_at', 'must be at least 10 seconds ahead');
    if (ahead > SCHEDULE_MAX_MS) throw invalidInput('send_at', 'must be at most 30 days ahead');
    return at;
  }

  /** The message acted on, in the chat `phone` names (404 otherwise). */
  private async target(instance: InstanceDoc, phone: string, messageId: string): Promise<{ connection: NetworkConnection; chat: string; original: NetworkMessage }> {
    const connection = this.d.manager.connection(instance._id);
    const chat = phone.includes('@') ? phone : `${phone.replace(/\D/g, '')}@s.whatsapp.net`;
    const original = await this.d.findMessage(instance._id, messageId);
    if (!original || ['reaction', 'edit', 'revoke', 'poll_vote'].includes(original.type) || !inChat(original, chat)) {
      throw notFound(`message ${messageId} not found in ${chat}`);
    }
    if (original.revoke || original.type === 'revoke') throw conflict('the message was deleted');
    return { connection, chat: original.chat_lid && chat.endsWith('@lid') ? original.chat_lid : original.chat, original };
  }

  private async self(instance: InstanceDoc): Promise<string[]> {
    const jid = await this.d.manager.selfJid(instance._id);
    return jid ? [jid] : [];
  }

  private newId(): string {
    return `3EB0${this.d.ids.alphanumeric(16)}`;
  }

  private async record(instance: InstanceDoc, events: SessionEvent[], context: CommandContext): Promise<void> {
    const position = await this.d.recorder.record(instance._id, instance.account_id, events, context);
    await this.d.readYourWrites?.settle(position, [messagesProjection.name]);
  }
}

