import { createHash } from 'node:crypto';
import type { HelpdeskReplyReceivedData } from '../../domain/helpdesk/events.js';
import type { NetworkMessage } from '../../domain/session/events.js';
import type { DocumentStore } from '../../infra/docstore/port.js';
import type { EventStore } from '../../infra/eventstore/port.js';
import type { HelpdeskDoc } from '../../projections/helpdesk/helpdesk-projection.js';
import { jidOfContact } from '../addresses.js';
import { HELPDESK_LINKS, linkId, type LinkDoc } from './jobs.js';

/** What the bridge needs of the session side: a send on the live connection, and its record. */
export interface WhatsAppSender {
  sendText(instanceId: string, to: string, text: string, messageId: string): Promise<NetworkMessage>;
  /** Records the sent message as the session's MessageSent (origin helpdesk), caused by `causationId`. */
  recordSent(instanceId: string, message: NetworkMessage, causationId: string): Promise<void>;
}

/** A final refusal: retrying cannot help (no address to send to). */
export class UndeliverableReply extends Error {
  override name = 'UndeliverableReply';
}

/**
 * Helpdesk to WhatsApp, one agent's answer. The message id is derived from the stored event, so a
 * send repeated after a crash is the same message on the network, and its MessageSent is recorded
 * only if the session stream does not have it already.
 */
export class ToWhatsApp {
  constructor(
    private readonly sender: WhatsAppSender,
    private readonly docs: DocumentStore,
    private readonly events: EventStore,
  ) {}

  async deliver(config: HelpdeskDoc, instanceId: string, reply: HelpdeskReplyReceivedData, eventId: string, retry: boolean): Promise<void> {
    const jid = jidOfContact(reply.contact);
    if (!jid) throw new UndeliverableReply('the helpdesk contact has neither a WhatsApp id nor a phone number');
    const messageId = messageIdFor(eventId);
    const sent = await this.sender.sendText(instanceId, jid, textOf(config, reply), messageId);
    if (!retry || !(await this.recorded(instanceId, sent.id))) await this.sender.recordSent(instanceId, sent, eventId);
    await this.docs.collection<LinkDoc>(HELPDESK_LINKS).replaceOne(
      { _id: linkId(instanceId, sent.id) },
      { _id: linkId(instanceId, sent.id), helpdesk_message_id: reply.helpdesk_message_id, conversation_id: reply.conversation_id, contact_source_id: reply.contact_source_id },
      { upsert: true, durable: true },
    );
  }

  /** Whether the session's recent events already hold this sent message (a crash after recording it). */
  private async recorded(instanceId: string, messageId: string): Promise<boolean> {
    const recent = await this.events.readStream(`session-${instanceId}`, { direction: 'backwards', maxCount: 500 });
    return recent.some((e) => e.type === 'MessageSent' && (e.data as { message?: { id?: unknown } }).message?.id === messageId);
  }
}

/** A WhatsApp-shaped id (`3EB0` + hex) fixed by the event that asked for the send. */
export function messageIdFor(eventId: string): string {
  return `3EB0${createHash('sha256').update(`helpdesk-reply:${eventId}`).digest('hex').slice(0, 16).toUpperCase()}`;
}

/** `sign_msg`: the agent's name in bold (WhatsApp's *bold*), the delimiter, then the text. */
function textOf(config: HelpdeskDoc, reply: HelpdeskReplyReceivedData): string {
  const links = reply.attachments.map((a) => a.data_url);
  const text = [reply.content, ...links].filter((part) => part !== '').join('\n');
  return config.sign_msg ? `*${reply.agent}*${config.sign_delimiter}${text}` : text;
}
