import { typedAs } from '../../domain/recorded.js';
import { createHash } from 'node:crypto';
import type { HelpdeskReplyReceivedData } from '../../domain/helpdesk/events.js';
import type { NetworkMessage } from '../../domain/session/events.js';
import type { DocumentStore } from '../../infra/docstore/port.js';
import type { EventStore } from '../../infra/eventstore/port.js';
import type { HelpdeskDoc } from '../../projections/helpdesk/helpdesk-projection.js';
import { jidOfContact } from '../addresses.js';
import type { HelpdeskClient } from '../port.js';
import type { OutgoingMedia } from '../../sessions/port.js';
import { HELPDESK_LINKS, linkId, type LinkDoc } from './jobs.js';

/** What the bridge needs of the session side: a send on the live connection, and its record. */
export interface WhatsAppSender {
  sendText(instanceId: string, to: string, text: string, messageId: string): Promise<NetworkMessage>;
  sendMedia(instanceId: string, to: string, media: OutgoingMedia, messageId: string): Promise<NetworkMessage>;
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
    /** Downloads an agent's attachment (the helpdesk's client, under the outbound policy). */
    private readonly files: Pick<HelpdeskClient, 'fetchFile'>,
  ) {}

  /**
   * The text, then each attachment as media of its kind. Every part goes out under an id derived
   * from the event and its place in it, so a retry after a crash sends no part twice.
   */
  async deliver(config: HelpdeskDoc, instanceId: string, reply: HelpdeskReplyReceivedData, eventId: string, retry: boolean): Promise<void> {
    const jid = jidOfContact(reply.contact);
    if (!jid) throw new UndeliverableReply('the helpdesk contact has neither a WhatsApp id nor a phone number');
    const text = textOf(config, reply);
    if (text !== '') await this.part(instanceId, reply, eventId, retry, () => this.sender.sendText(instanceId, jid, text, messageIdFor(eventId)));
    for (const [i, attachment] of reply.attachments.entries()) {
      const file = await this.files.fetchFile(attachment.data_url, MAX_ATTACHMENT_BYTES);
      // Signed but wordless: the agent's name goes with the first file.
      const caption = text === '' && i === 0 && config.sign_msg ? { caption: `*${reply.agent}*` } : {};
      const media: OutgoingMedia = { kind: kindOf(attachment.file_type, file.contentType), mimetype: file.contentType, bytes: file.bytes, file_name: file.name, ...caption };
      await this.part(instanceId, reply, eventId, retry, () => this.sender.sendMedia(instanceId, jid, media, messageIdFor(`${eventId}:${i}`)));
    }
  }

  private async part(instanceId: string, reply: HelpdeskReplyReceivedData, eventId: string, retry: boolean, send: () => Promise<NetworkMessage>): Promise<void> {
    const sent = await send();
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
    return recent.some((e) => typedAs(e, 'MessageSent')?.data.message.id === messageId);
  }
}

/** A WhatsApp-shaped id (`3EB0` + hex) fixed by the event that asked for the send. */
function messageIdFor(eventId: string): string {
  return `3EB0${createHash('sha256').update(`helpdesk-reply:${eventId}`).digest('hex').slice(0, 16).toUpperCase()}`;
}

/** The largest attachment an agent's answer may carry to WhatsApp (the network's document limit is larger; a helpdesk's is 40 MB). */
const MAX_ATTACHMENT_BYTES = 64 * 1024 * 1024;

/** `sign_msg`: the agent's name in bold (WhatsApp's *bold*), the delimiter, then the text. */
function textOf(config: HelpdeskDoc, reply: HelpdeskReplyReceivedData): string {
  if (reply.content === '') return '';
  return config.sign_msg ? `*${reply.agent}*${config.sign_delimiter}${reply.content}` : reply.content;
}

/** Chatwoot's file_type (image, video, audio, file...), checked against what the file says it is. */
function kindOf(fileType: string, contentType: string): OutgoingMedia['kind'] {
  for (const kind of ['image', 'video', 'audio'] as const) if (fileType === kind && contentType.startsWith(`${kind}/`)) return kind;
  return 'document';
}
