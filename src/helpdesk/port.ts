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

export interface HelpdeskClient {
  listInboxes(account: HelpdeskAccount): Promise<HelpdeskInbox[]>;
  createApiInbox(account: HelpdeskAccount, name: string, webhookUrl: string): Promise<HelpdeskInbox>;
  setInboxWebhook(account: HelpdeskAccount, inboxId: number, webhookUrl: string): Promise<HelpdeskInbox>;
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
