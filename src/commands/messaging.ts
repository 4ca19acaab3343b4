import type { Clock } from '../infra/clock.js';
import type { SessionEvent, SessionEventData } from '../domain/session/events.js';
import type { IdGenerator } from '../infra/ids.js';
import type { SendPacer } from './send-pacing/pacer.js';
import type { InstanceDoc } from '../projections/instances/instances-projection.js';
import type { ButtonsContent, NetworkConnection } from '../sessions/port.js';
import type { SessionManager } from '../sessions/session-manager.js';
import type { ReadYourWrites } from './read-your-writes.js';
import { messagesProjection } from '../projections/messages/messages-projection.js';
import type { SessionRecorder } from '../sessions/session-recorder.js';
import type { CommandContext } from '../domain/audit.js';
import { onNetwork } from '../sessions/network-call.js';
import { toJid } from '../domain/session/phone-numbers.js';

/**
 * Operations on the network. Each goes through the live connection and records what it did
 * as session events, so webhooks and the chat list see API-sent messages like any other.
 */
/** What a send answers: the message id, and whether it waits for its turn (send pacing). */
export interface SendAnswer {
  messageId: string;
  queued: boolean;
}

export class MessagingCommands {
  constructor(
    private readonly manager: SessionManager,
    private readonly recorder: SessionRecorder,
    private readonly clock: Clock,
    /** Unpaced when absent: every send goes at once. */
    private readonly pacing?: { pacer: SendPacer; ids: IdGenerator },
    /** A send answers once its message is in the messages model (a GET of its id right after finds it). */
    private readonly readYourWrites?: ReadYourWrites,
  ) {}

  private nowSeconds(): number {
    return Math.floor(this.clock.now().getTime() / 1000);
  }

  async sendText(instance: InstanceDoc, phone: string, text: string, replyTo: string | undefined, context: CommandContext): Promise<SendAnswer> {
    if (this.pacing && !this.pacing.pacer.tryNow(instance._id)) {
      return this.queue(instance, phone, { kind: 'text', text, ...(replyTo === undefined ? {} : { reply_to: replyTo }) }, context);
    }
    const message = await this.call(instance, (c) => c.sendText(toJid(phone), text, replyTo ? { replyTo } : {}));
    await this.record(instance, [{ type: 'MessageSent', data: { message, origin: 'api' } }], context);
    return { messageId: message.id, queued: false };
  }

  async sendButtons(instance: InstanceDoc, phone: string, content: ButtonsContent, context: CommandContext): Promise<SendAnswer & { fallback?: string }> {
    if (this.pacing && !this.pacing.pacer.tryNow(instance._id)) {
      const { text, footer, buttons } = content;
      return this.queue(instance, phone, { kind: 'buttons', buttons, ...(text === undefined ? {} : { text }), ...(footer === undefined ? {} : { footer }) }, context);
    }
    const { message, fallback } = await this.call(instance, (c) => c.sendButtons(toJid(phone), content));
    await this.record(instance, [{ type: 'MessageSent', data: fallback ? { message, origin: 'api', fallback } : { message, origin: 'api' } }], context);
    return fallback ? { messageId: message.id, queued: false, fallback } : { messageId: message.id, queued: false };
  }

  /**
   * Not its turn yet: the send is stored in the log with the id it will go out under, and
   * answered at once. A down session queues nothing (409 not_connected, as a direct send).
   */
  private async queue(instance: InstanceDoc, phone: string, content: SessionEventData<'SendQueued'>['content'], context: CommandContext): Promise<SendAnswer> {
    const pacing = this.pacing as { pacer: SendPacer; ids: IdGenerator };
    this.manager.connection(instance._id);
    const messageId = `3EB0${pacing.ids.alphanumeric(16)}`;
    // Counted before the await, so a send arriving meanwhile queues behind this one.
    pacing.pacer.queued(instance._id);
    try {
      await this.record(instance, [{ type: 'SendQueued', data: { message_id: messageId, to: toJid(phone), content } }], context);
    } catch (err) {
      pacing.pacer.dequeued(instance._id, false);
      throw err;
    }
    return { messageId, queued: true };
  }

  async markRead(instance: InstanceDoc, phone: string, messageIds: string[], context: CommandContext) {
    const chat = toJid(phone);
    await this.call(instance, (c) => c.markRead(chat, messageIds));
    const self = (await this.manager.selfJid(instance._id)) ?? chat;
    await this.record(
      instance,
      [{ type: 'ReceiptReceived', data: { message_ids: messageIds, chat, sender: self, state: 'ReadSelf', timestamp_s: this.nowSeconds() } }],
      context,
    );
  }

  async react(instance: InstanceDoc, phone: string, messageId: string, reaction: string, context: CommandContext) {
    const message = await this.call(instance, (c) => c.react(toJid(phone), messageId, reaction));
    await this.record(instance, [{ type: 'MessageSent', data: { message, origin: 'api' } }], context);
    return message.id;
  }

  private call<T>(instance: InstanceDoc, op: (connection: NetworkConnection) => Promise<T>): Promise<T> {
    return onNetwork(this.manager, instance._id, op);
  }

  private async record(instance: InstanceDoc, events: SessionEvent[], context: CommandContext): Promise<void> {
    const position = await this.recorder.record(instance._id, instance.account_id, events, context);
    await this.readYourWrites?.settle(position, [messagesProjection.name]);
  }
}
