import type { TSchema } from '@sinclair/typebox';
import { expect } from 'chai';
import { EVENT_SCHEMAS } from '../../src/projections/history/event-catalog.js';
import { isSecretField, redact, REDACTED } from '../../src/projections/history/redaction.js';

/** Every property name at any depth of a schema. */
function fieldNames(schema: TSchema, into = new Set<string>()): Set<string> {
  const s = schema as { properties?: Record<string, TSchema>; items?: TSchema; anyOf?: TSchema[]; patternProperties?: Record<string, TSchema> };
  for (const [name, sub] of Object.entries(s.properties ?? {})) {
    into.add(name);
    fieldNames(sub, into);
  }
  if (s.items) fieldNames(s.items, into);
  for (const sub of s.anyOf ?? []) fieldNames(sub, into);
  for (const sub of Object.values(s.patternProperties ?? {})) fieldNames(sub, into);
  return into;
}

/**
 * Reviewed: these fields of stored events may show in history. A field added to any event schema
 * fails this test until it is either listed here (it holds nothing secret) or named so the
 * redaction rule hides it.
 */
const SHOWN = new Set(
  `preview method jid phone push_name lid platform business reason status_code by about picture_id picture_url verified_name
  business_name business_hours_timezone categories id name profile_options address email website description message chat
  sender sender_pn sender_lid from_me is_group timestamp_s type text reply_to media kind url direct_path file_enc_sha256
  file_sha256 file_length mimetype caption file_name seconds ptt width height reaction message_id buttons footer items upsert
  origin fallback message_ids state last_seen_s sync_type progress is_latest chats archived pinned mute_end_ms unread_count
  marked_as_unread is_marked_spam last_message_s community_jid read_only messages changes unread_delta cleared deleted groups
  owner_jid owner_pn topic topic_deleted is_locked is_announce is_ephemeral disappearing_timer created_s is_community
  participants phone_number is_admin is_super_admin display_name group pairs pn call_id from instance_id account_id
  reject_calls auto_read_messages labels billing_status expired_at events canceled_at user_id
  delivery_id event_id attempts status_code latency_ms error started_at provider_subscription_id cancel_at grace_ends_at
  chat_lid addressing_mode quoted location latitude longitude contacts vcard poll options selectable_count edit revoke
  participant to content config_id settings enabled name_inbox sign_msg sign_delimiter number reopen_conversation
  conversation_pending import_contacts import_messages days_limit_import_messages organization logo ignore_jids
  ignore_groups inbox_id inbox_identifier callback_generation helpdesk_message_id conversation_id contact_source_id agent
  attachments file_type data_url contact identifier status jti via user_agent expires_at generation
  action jids last_seen online profile_picture read_receipts color label_id labeled background_color font recipients
  button_text code creator_jid delay_ms enc_iv enc_payload forwarded gif link_preview list mentions poll_message_id poll_vote rows
  sections selected_options thumbnail title undecrypted view_once voter_jid waveform send_at was
  ptv album images videos event start_s end_s join_link canceled expires_s group_name
  bot_id trigger value scope expire_minutes stop_keyword pause_on_human typebot model system_prompt max_history at answers
  bot_session choices idle_minutes attempt gave_up vision`.split(/\s+/),
);

describe('history redaction', () => {
  it('hides every field of every event schema that is not reviewed as shown', () => {
    const unreviewed: string[] = [];
    for (const [type, schema] of Object.entries(EVENT_SCHEMAS)) {
      for (const name of fieldNames(schema)) {
        if (!isSecretField(name) && !SHOWN.has(name)) unreviewed.push(`${type}.${name}`);
      }
    }
    expect(unreviewed, 'fields neither redacted nor reviewed as shown').to.deep.equal([]);
  });

  it('hides the secrets, hashes and sealed values the log holds today', () => {
    for (const name of ['token_hash', 'webhook_secret_sealed', 'password_hash', 'client_secret_hash', 'client_token', 'media_key', 'invite_code']) {
      expect(isSecretField(name), name).to.equal(true);
    }
    for (const name of SHOWN) expect(isSecretField(name), name).to.equal(false);
  });

  it("hides a bot's API key, sealed or masked, and shows its stop keyword", () => {
    for (const name of ['api_key', 'api_key_sealed', 'api_key_masked']) expect(isSecretField(name), name).to.equal(true);
    expect(redact({ stop_keyword: 'stop', api_key_masked: 'sk-1…abcd' })).to.deep.equal({ stop_keyword: 'stop', api_key_masked: REDACTED });
  });

  it('redacts at every depth, in arrays too, and leaves the rest as it was', () => {
    const data = {
      name: 'n',
      token_hash: 'h',
      message: { text: 't', media: { media_key: 'k', url: 'u' } },
      groups: [{ id: 'g', invite_code: 'c' }],
      nothing: null,
    };
    expect(redact(data)).to.deep.equal({
      name: 'n',
      token_hash: REDACTED,
      message: { text: 't', media: { media_key: REDACTED, url: 'u' } },
      groups: [{ id: 'g', invite_code: REDACTED }],
      nothing: null,
    });
  });
});
