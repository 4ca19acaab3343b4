import type { NetworkMessage } from '../../domain/session/events.js';
import type { DocumentStore } from '../../infra/docstore/port.js';
import type { HelpdeskDoc } from '../../projections/helpdesk/helpdesk-projection.js';
import { isGroupJid, phoneOf, phoneVariants } from '../addresses.js';
import { HelpdeskError, type HelpdeskAccount, type HelpdeskClient, type HelpdeskContact, type HelpdeskConversation, type HelpdeskFile } from '../port.js';
import { HELPDESK_LINKS, linkId, type LinkDoc } from './jobs.js';

export interface MediaFetcher {
  /** The decrypted bytes of a message's media, or null when it cannot be had. */
  fetch(message: NetworkMessage): Promise<HelpdeskFile | null>;
}

const sourceIdOf = (messageId: string) => `WAID:${messageId}`;

/**
 * WhatsApp to helpdesk, one message: the contact (found by jid, phone or the other Brazilian form,
 * created when none matches), its one open conversation, then the message with `source_id`
 * `WAID:<id>`. A retry first looks for that source id in the conversation, so a message created
 * before a crash is never created twice. The caller runs one instance's messages one at a time,
 * which is what keeps two messages arriving together from opening two conversations.
 */
export class ToHelpdesk {
  constructor(
    private readonly client: HelpdeskClient,
    private readonly docs: DocumentStore,
    private readonly media: MediaFetcher,
  ) {}

  async deliver(config: HelpdeskDoc, account: HelpdeskAccount, instanceId: string, message: NetworkMessage, retry: boolean): Promise<void> {
    if (config.inbox_id === null) throw new HelpdeskError(null, 'the configuration has no inbox yet');
    const links = this.docs.collection<LinkDoc>(HELPDESK_LINKS);
    if (await links.findOne({ _id: linkId(instanceId, message.id) })) return;
    if (message.revoke) {
      // A deletion for everyone deletes the bridged message; one never bridged has nothing to delete.
      const deleted = await links.findOne({ _id: linkId(instanceId, message.revoke.message_id) });
      if (deleted) {
        await this.client.deleteMessage(account, deleted.conversation_id, deleted.helpdesk_message_id).catch((err: unknown) => {
          // Gone already (an agent deleted it, or a retry after the deletion went through).
          if (!(err instanceof HelpdeskError && err.status === 404)) throw err;
        });
      }
      await links.replaceOne({ _id: linkId(instanceId, message.id) }, { _id: linkId(instanceId, message.id), helpdesk_message_id: deleted?.helpdesk_message_id ?? 0, conversation_id: deleted?.conversation_id ?? 0, contact_source_id: deleted?.contact_source_id ?? '' }, { upsert: true, durable: true });
      return;
    }
    const contact = await this.contact(account, config.inbox_id, message);
    const conversation = await this.conversation(account, config, contact);
    const sourceId = sourceIdOf(message.id);
    let helpdeskId = retry ? (await this.client.messageSources(account, conversation.id)).find((m) => m.source_id === sourceId)?.id : undefined;
    if (helpdeskId === undefined) {
      // A reaction and an edit answer the message they are about (Chatwoot edits nothing in place).
      const quoted = message.reply_to ?? message.reaction?.message_id ?? message.edit?.message_id;
      const inReplyTo = quoted ? (await links.findOne({ _id: linkId(instanceId, quoted) }))?.helpdesk_message_id : undefined;
      const file = message.media ? await this.media.fetch(message) : null;
      const created = await this.client.createMessage(account, conversation.id, {
        content: contentOf(message),
        message_type: message.from_me ? 'outgoing' : 'incoming',
        source_id: sourceId,
        ...(inReplyTo === undefined ? {} : { content_attributes: { in_reply_to: inReplyTo } }),
        ...(file ? { attachments: [file] } : {}),
      });
      helpdeskId = created.id;
    }
    await links.replaceOne(
      { _id: linkId(instanceId, message.id) },
      { _id: linkId(instanceId, message.id), helpdesk_message_id: helpdeskId, conversation_id: conversation.id, contact_source_id: conversation.contact_source_id },
      { upsert: true, durable: true },
    );
  }

  /** The person (or group) behind a chat, in the helpdesk. */
  private contact(account: HelpdeskAccount, inboxId: number, message: NetworkMessage): Promise<HelpdeskContact> {
    // A LID-addressed chat is the person's phone jid whenever the network told it.
    const jid = !isGroupJid(message.chat) && message.chat.endsWith('@lid') && message.sender_pn ? message.sender_pn : message.chat;
    const lid = isGroupJid(message.chat) ? undefined : message.chat.endsWith('@lid') ? message.chat : message.sender_lid;
    return this.ensureContact(account, inboxId, jid, lid, !message.from_me && !message.is_group ? message.push_name : undefined);
  }

  /** Finds the contact by jid (or LID), then by phone in both Brazilian forms; creates it when none matches. */
  async ensureContact(account: HelpdeskAccount, inboxId: number, jid: string, lid: string | undefined, pushName: string | undefined): Promise<HelpdeskContact> {
    const find = async () => {
      const byId = await this.client.findContacts(account, 'identifier', lid && lid !== jid ? [jid, lid] : [jid]);
      if (byId[0]) return byId[0];
      const digits = phoneOf(jid);
      return digits ? (await this.client.findContacts(account, 'phone_number', phoneVariants(digits)))[0] : undefined;
    };
    const found = await find();
    if (found) return found;
    const digits = phoneOf(jid);
    const name = pushName || (isGroupJid(jid) ? `Group ${jid.split('@')[0]}` : digits ? `+${digits}` : jid);
    try {
      return await this.client.createContact(account, { inbox_id: inboxId, name, identifier: jid, ...(digits ? { phone_number: `+${digits}` } : {}) });
    } catch (err) {
      // Taken meanwhile (another node, another form of the number): whoever made it, it is this person.
      if (err instanceof HelpdeskError && err.status === 422) {
        const raced = await find();
        if (raced) return raced;
      }
      throw err;
    }
  }

  /** The contact's one open conversation in this inbox, reopened or started as configured. */
  private async conversation(account: HelpdeskAccount, config: HelpdeskDoc, contact: HelpdeskContact): Promise<HelpdeskConversation> {
    const inbox = config.inbox_id as number;
    const all = (await this.client.contactConversations(account, contact.id)).filter((c) => c.inbox_id === inbox).sort((a, b) => b.id - a.id);
    const open = all.find((c) => c.status !== 'resolved');
    if (open) return open;
    const last = all[0];
    if (last && config.reopen_conversation) {
      await this.client.setConversationStatus(account, last.id, 'open');
      return { ...last, status: 'open' };
    }
    return this.client.createConversation(account, { inbox_id: inbox, contact_id: contact.id, status: config.conversation_pending ? 'pending' : 'open' });
  }
}

/** The text a message shows in the helpdesk; a group message names its sender. */
function contentOf(message: NetworkMessage): string {
  const body = message.edit ? `✏️ ${message.text ?? ''}` : (message.text ?? message.media?.caption ?? message.reaction?.text ?? describe(message));
  if (!message.is_group || message.from_me) return body;
  const who = message.push_name || phoneOf(message.sender_pn ?? message.sender) || message.sender;
  return `**${who}**: ${body}`;
}

/** The message types that have no text of their own, said in words. */
function describe(message: NetworkMessage): string {
  if (message.location) {
    const { latitude, longitude, name } = message.location;
    return `📍 ${name ? `${name} ` : ''}https://maps.google.com/?q=${latitude},${longitude}`;
  }
  if (message.contacts) return message.contacts.map((c) => `👤 ${c.display_name}`).join('\n');
  if (message.poll) return `📊 ${message.poll.name}\n${message.poll.options.map((o) => `• ${o}`).join('\n')}`;
  return message.media ? '' : `[${message.type}]`;
}
