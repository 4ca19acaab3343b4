import { DisconnectReason as Codes, type AuthenticationCreds, type BaileysEventMap, type Contact } from '@whiskeysockets/baileys';
import type { DisconnectReason, SessionEvent } from '../../domain/session/events.js';
import { chatsDeleteEvents, chatsUpsertEvents, chatUpdateEvents, historyEvents, liveUnreadIncrements } from './chat-translator.js';
import { compact } from './compact.js';
import { groupParticipantsEvents, groupsUpdateEvents, groupsUpsertEvents } from './group-translator.js';
import { groupChangeEvents } from './group-change-translator.js';
import { accountEvents } from './account-translator.js';
import { isLid, jidUser, normalizeJid } from './jid.js';
import { lidMappingEvent, messageLidPairs, uniquePairs } from './lid-pairs.js';
import { translateMessage, type TranslateContext } from './message-translator.js';
import { presenceEvents, type WasTyping } from './presence-translator.js';
import { messageUpdateReceipts, userReceiptEvents } from './receipt-translator.js';

/**
 * Baileys happenings → SessionEvents. Pure: everything here is a function of its arguments, so
 * the mapping is tested without a socket. The connection (baileys-connection.ts) owns the side
 * effects: QR strings, connection state, credentials, group refreshes, calls. It reports a close
 * with disconnectReasonOf; SessionDisconnected and SessionLoggedOut are the session manager's to
 * record, as it decides what the close means (reconnect, stop, wipe).
 */

export { translateMessage, type TranslateContext } from './message-translator.js';

export interface BatchContext extends TranslateContext {
  wasTyping: WasTyping;
}

export interface BatchTranslation {
  events: SessionEvent[];
  /** Groups whose metadata changed in a way only a fresh fetch can describe. */
  refreshGroups: string[];
}

/**
 * One emission of Baileys' event buffer (`ev.process`). The buffer merges everything that
 * happened while it was buffering, losing the order between kinds; we restore a causal one:
 * history and chats first, then groups, identity mappings, messages, then what refers to
 * messages (receipts), then membership and presence.
 */
export function translateBatch(batch: Partial<BaileysEventMap>, ctx: BatchContext): BatchTranslation {
  const events: SessionEvent[] = [];
  const refreshGroups: string[] = [];
  const refresh = (jids: string[]) => jids.forEach((j) => refreshGroups.includes(j) || refreshGroups.push(j));

  if (batch['messaging-history.set']) events.push(...historyEvents(batch['messaging-history.set'], ctx));
  if (batch['chats.upsert']) events.push(...chatsUpsertEvents(batch['chats.upsert'], ctx));
  if (batch['groups.upsert']) events.push(...groupsUpsertEvents(batch['groups.upsert']));
  if (batch['groups.update']) {
    const { events: upserts, incomplete } = groupsUpdateEvents(batch['groups.update']);
    events.push(...upserts);
    refresh(incomplete);
  }
  if (batch['chats.update']) events.push(...chatUpdateEvents(batch['chats.update'], liveUnreadIncrements(batch['messages.upsert'], ctx), ctx));
  if (batch['chats.delete']) events.push(...chatsDeleteEvents(batch['chats.delete'], ctx));
  if (batch['lid-mapping.update']) events.push(...lidMappingEvents(batch['lid-mapping.update']));
  if (batch['messages.upsert']) events.push(...messagesUpsertEvents(batch['messages.upsert'], ctx));
  if (batch['messages.update']) events.push(...messageUpdateReceipts(batch['messages.update'], ctx));
  if (batch['message-receipt.update']) events.push(...userReceiptEvents(batch['message-receipt.update'], ctx));
  if (batch['group-participants.update']) {
    const { events: membership, refresh: roles } = groupParticipantsEvents(batch['group-participants.update']);
    events.push(...membership);
    refresh(roles);
  }
  if (batch['presence.update']) events.push(...presenceEvents(batch['presence.update'], ctx.wasTyping, ctx));
  // Who changed what in groups, the address book, block list and labels (account-events.ts).
  events.push(...groupChangeEvents(batch, ctx), ...accountEvents(batch));
  return { events, refreshGroups };
}

/**
 * New messages. `notify` are live; `append` are catch-up: messages that reached us while the
 * socket was offline (Baileys marks offline stanzas 'append'), notifications turned into
 * messages, and our phone's own sends synced to us. The upsert type is kept on MessageReceived so
 * consumers can tell live from catch-up (the session manager auto-reads only `notify`); history
 * proper never comes here, it arrives as `messaging-history.set`.
 *
 * Ours (fromMe) are MessageSent from the device, whichever the type: the API's own sends never
 * come back here because the driver turns Baileys' echo of them off (emitOwnEvents: false) and the
 * API records them from the send result, so a fromMe upsert is always the phone or another
 * linked device.
 *
 * Phone↔LID pairs the message keys reveal come first, so a consumer that maps identities knows
 * the pair before it sees the message.
 */
export function messagesUpsertEvents(upsert: BaileysEventMap['messages.upsert'], ctx: TranslateContext): SessionEvent[] {
  const events: SessionEvent[] = [];
  for (const raw of upsert.messages) {
    const message = translateMessage(raw, ctx);
    if (!message) continue;
    if (message.from_me) events.push({ type: 'MessageSent', data: { message, origin: 'device' } });
    else events.push({ type: 'MessageReceived', data: { message, upsert: upsert.type } });
  }
  return [...lidMappingEvent(messageLidPairs(upsert.messages)), ...events];
}

export function lidMappingEvents(mapping: BaileysEventMap['lid-mapping.update']): SessionEvent[] {
  // Both orders: uniquePairs keeps only the one that really is (phone number, LID).
  return lidMappingEvent(uniquePairs([[mapping.pn, mapping.lid], [mapping.lid, mapping.pn]]));
}

/**
 * The connected account, when the connection opens. WhatsApp Business apps report a platform
 * starting with "smb" (smba: Android, smbi: iOS).
 */
export function connectedEvent(user: Contact, creds: Pick<AuthenticationCreds, 'platform' | 'me'>): SessionEvent {
  const jid = normalizeJid(user.id) ?? user.id;
  const lid = normalizeJid(user.lid ?? creds.me?.lid);
  const platform = creds.platform || undefined;
  return {
    type: 'SessionConnected',
    data: compact({
      jid,
      phone: jidUser(jid) ?? '',
      push_name: user.name || user.notify || creds.me?.name || undefined,
      lid: isLid(lid) ? lid : undefined,
      platform,
      business: !!platform?.startsWith('smb'),
    }),
  };
}

const CLIENT_OUTDATED = 405;

const REASONS = new Map<number, DisconnectReason>([
  [Codes.loggedOut, 'logged_out'],
  [Codes.forbidden, 'forbidden'],
  [Codes.multideviceMismatch, 'multidevice_mismatch'],
  [Codes.connectionClosed, 'connection_closed'],
  [Codes.connectionReplaced, 'replaced'],
  [Codes.badSession, 'bad_session'],
  [Codes.unavailableService, 'unavailable'],
  [Codes.restartRequired, 'restart_required'],
  // Not in Baileys' enum: the server's <failure reason="405"> when it refuses the client version.
  [CLIENT_OUTDATED, 'client_outdated'],
]);

/**
 * Why the connection closed, from `lastDisconnect.error`: Baileys raises Boom errors whose
 * `output.statusCode` is one of its DisconnectReason codes. 408 serves both a lost connection
 * (keep-alive missed: "Connection was lost") and timeouts (QR attempts ended, connect timeout);
 * the message tells them apart. Anything else, or no error at all, is `unknown`.
 */
export function disconnectReasonOf(error: unknown): { reason: DisconnectReason; statusCode?: number } {
  const statusCode = statusCodeOf(error);
  if (statusCode === undefined) return { reason: 'unknown' };
  if (statusCode === Codes.timedOut) {
    const message = error instanceof Error ? error.message : '';
    return { reason: /lost/i.test(message) ? 'connection_lost' : 'timed_out', statusCode };
  }
  return { reason: REASONS.get(statusCode) ?? 'unknown', statusCode };
}

function statusCodeOf(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const output = (error as { output?: unknown }).output;
  if (typeof output !== 'object' || output === null) return undefined;
  const code = (output as { statusCode?: unknown }).statusCode;
  return typeof code === 'number' && Number.isInteger(code) ? code : undefined;
}
