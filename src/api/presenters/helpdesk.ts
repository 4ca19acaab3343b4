import type { HelpdeskDoc } from '../../projections/helpdesk/helpdesk-projection.js';
import type { ImportProgress } from '../../helpdesk/bridge/bridge.js';

/** The spec's helpdesk configuration, fields in its order; the token never, only its mask. */
export function presentHelpdesk(doc: HelpdeskDoc, webhookUrl: string, importProgress: ImportProgress | null) {
  return {
    id: doc.config_id,
    instance_id: doc._id,
    enabled: doc.enabled,
    url: doc.url,
    account_id: doc.account_id,
    name_inbox: doc.name_inbox,
    token_masked: doc.token_masked,
    inbox_id: doc.inbox_id,
    inbox_identifier: doc.inbox_identifier,
    sign_msg: doc.sign_msg,
    sign_delimiter: doc.sign_delimiter,
    number: doc.number,
    reopen_conversation: doc.reopen_conversation,
    conversation_pending: doc.conversation_pending,
    import_contacts: doc.import_contacts,
    import_messages: doc.import_messages,
    days_limit_import_messages: doc.days_limit_import_messages,
    organization: doc.organization,
    logo: doc.logo,
    ignore_jids: doc.ignore_jids,
    ignore_groups: doc.ignore_groups,
    webhook_url: webhookUrl,
    created_at: doc.created_at,
    updated_at: doc.updated_at,
    // After the spec's fields: how far the history import has come (null before any).
    import_progress: importProgress,
  };
}
