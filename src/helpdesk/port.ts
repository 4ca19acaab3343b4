/**
 * The helpdesk the bridge talks to, as the bridge needs it. One adapter speaks Chatwoot's REST
 * API (chatwoot-client.ts); tests run it against test/servers/chatwoot.
 */

export interface HelpdeskAccount {
  /** Base address, no trailing slash. */
  url: string;
  accountId: string;
  token: string;
}

export interface HelpdeskInbox {
  id: number;
  name: string;
  inbox_identifier: string;
  webhook_url: string;
  /** Shown by newer versions to administrators; signs the inbox's callbacks. */
  secret?: string;
}

export interface HelpdeskContact {
  id: number;
  name: string;
  phone_number: string | null;
  identifier: string | null;
}

export interface HelpdeskConversation {
  id: number;
  inbox_id: number;
  status: 'open' | 'pending' | 'resolved' | 'snoozed';
  /** The contact's id in the inbox, which the public API (mark seen) addresses it by. */
  contact_source_id: string;
}

export interface HelpdeskFile {
  name: string;
  contentType: string;
  bytes: Buffer;
}

export interface NewHelpdeskMessage {
  content: string;
  message_type: 'incoming' | 'outgoing';
  private?: boolean;
  source_id?: string;
  /** `in_reply_to`: the helpdesk id of the message answered. */
  content_attributes?: Record<string, unknown>;
  attachments?: HelpdeskFile[];
}

export interface HelpdeskClient {
  listInboxes(account: HelpdeskAccount): Promise<HelpdeskInbox[]>;
  createApiInbox(account: HelpdeskAccount, name: string, webhookUrl: string): Promise<HelpdeskInbox>;
  setInboxWebhook(account: HelpdeskAccount, inboxId: number, webhookUrl: string): Promise<HelpdeskInbox>;
  /** Contacts whose `attribute` equals one of `values` exactly. */
  findContacts(account: HelpdeskAccount, attribute: 'identifier' | 'phone_number', values: string[]): Promise<HelpdeskContact[]>;
  /** Throws HelpdeskError 422 when the phone number or identifier is taken. */
  createContact(account: HelpdeskAccount, contact: { inbox_id: number; name: string; phone_number?: string; identifier: string }): Promise<HelpdeskContact>;
  contactConversations(account: HelpdeskAccount, contactId: number): Promise<HelpdeskConversation[]>;
  createConversation(account: HelpdeskAccount, conversation: { inbox_id: number; contact_id: number; status: 'open' | 'pending' }): Promise<HelpdeskConversation>;
  setConversationStatus(account: HelpdeskAccount, conversationId: number, status: 'open' | 'pending' | 'resolved'): Promise<void>;
  /** Throws HelpdeskError 422 when the conversation takes no more messages for now. */
  createMessage(account: HelpdeskAccount, conversationId: number, message: NewHelpdeskMessage): Promise<{ id: number }>;
  /** The conversation's messages that carry a `source_id`, newest last. */
  messageSources(account: HelpdeskAccount, conversationId: number): Promise<{ id: number; source_id: string }[]>;
  deleteMessage(account: HelpdeskAccount, conversationId: number, messageId: number): Promise<void>;
  /** An attachment's bytes (an agent's file), at most `maxBytes`; the URL passes the outbound policy. */
  fetchFile(url: string, maxBytes: number): Promise<HelpdeskFile>;
  /** The public inbox API: the contact has seen the conversation up to now. */
  markSeen(account: HelpdeskAccount, inboxIdentifier: string, contactSourceId: string, conversationId: number): Promise<void>;
}

/**
 * The helpdesk answered with an error status (`status`), or could not be reached (`status` null).
 * Callers decide what it means for their user: a refused token is the caller's mistake, an
 * unreachable helpdesk is not.
 */
export class HelpdeskError extends Error {
  constructor(
    readonly status: number | null,
    message: string,
    /** Seconds the helpdesk asked us to wait, when it said so. */
    readonly retryAfterS?: number,
  ) {
    super(message);
    this.name = 'HelpdeskError';
  }
}
