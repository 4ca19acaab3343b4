import { isRealMessage, proto, shouldIncrementChatUnread, type BaileysEventMap, type Chat, type ChatUpdate } from '@whiskeysockets/baileys';
import type { SessionEvent, SessionEventData } from '../../domain/session/events.js';
import { compact } from './compact.js';
import { isLid, isPhoneJid, normalizeJid, toInt, type ProtoInt } from './jid.js';
import { messageLidPairs, uniquePairs } from './lid-pairs.js';
import { translateMessage, type TranslateContext } from './message-translator.js';

type ChatInfo = SessionEventData<'ChatsUpserted'>['chats'][number];
type ChatChanges = SessionEventData<'ChatUpdated'>['changes'];
type LidPair = SessionEventData<'LidMappingLearned'>['pairs'][number];

/** History is split so no single stored event grows without bound (a chunk can hold thousands). */
export const HISTORY_MESSAGES_PER_EVENT = 250;
export const HISTORY_CHATS_PER_EVENT = 500;

/**
 * Mute ends arrive in milliseconds from app-state mute actions and, in history conversations, in
 * seconds; -1 means forever. Any real millisecond timestamp is above 1e11 (1973), any second
 * timestamp below it until the year 5138, so the magnitude tells them apart.
 */
export function muteEndMs(value: ProtoInt): number | undefined {
  const n = toInt(value);
  if (n === undefined) return undefined;
  if (n <= 0) return n < 0 ? -1 : 0;
  return n < 1e11 ? n * 1000 : n;
}

/**
 * A chat's jid as the chat list keys it: a person by phone jid whenever the pair is known (the
 * chat's own `pnJid`, or a pair learned before), so one person is one chat (CONTRACT.md, "Addresses").
 */
function chatJid(id: string | null | undefined, ctx: TranslateContext, pnJid?: string | null): string | undefined {
  const jid = normalizeJid(id);
  if (!jid || !isLid(jid)) return jid;
  const pn = normalizeJid(pnJid);
  return (pn && isPhoneJid(pn) ? pn : ctx.pnOf?.(jid)) ?? jid;
}

/** A chat as the network describes it in history and upserts (counts are absolute there). */
export function chatInfoOf(chat: Chat, ctx: TranslateContext = {}): ChatInfo | undefined {
  const jid = chatJid(chat.id, ctx, chat.pnJid);
  if (!jid) return undefined;
  return compact<ChatInfo>({
    jid,
    name: chat.name || chat.displayName || undefined,
    archived: chat.archived ?? undefined,
    pinned: chat.pinned === null || chat.pinned === undefined ? undefined : chat.pinned > 0,
    mute_end_ms: muteEndMs(chat.muteEndTime),
    unread_count: chat.unreadCount === null || chat.unreadCount === undefined ? undefined : Math.max(0, chat.unreadCount),
    marked_as_unread: chat.markedAsUnread ?? undefined,
    last_message_s: lastMessageSeconds(chat),
    community_jid: normalizeJid(chat.parentGroupId),
    read_only: chat.readOnly ?? undefined,
  });
}

function lastMessageSeconds(chat: Chat): number | undefined {
  return toInt(chat.conversationTimestamp) || toInt(chat.lastMsgTimestamp) || toInt(chat.lastMessageRecvTimestamp) || undefined;
}

export function chatsUpsertEvents(chats: BaileysEventMap['chats.upsert'], ctx: TranslateContext = {}): SessionEvent[] {
  const infos = chats.map((c) => chatInfoOf(c, ctx)).filter((c): c is ChatInfo => !!c);
  return infos.length ? [{ type: 'ChatsUpserted', data: { chats: infos } }] : [];
}

/**
 * `chats.update` carries only what changed. Its `unreadCount` has three meanings in Baileys v7
 * (lib/Utils/process-message.js, chat-utils.js, event-buffer.js):
 * - a positive number is an increment: process-message sends `unreadCount: 1` for every real
 *   message from someone else (notify or append) and the event buffer sums the increments;
 * - 0 comes from the phone marking the chat read (an absolute count);
 * - -1 comes from the phone marking it unread (a flag, no count);
 * - null neutralises a pending mark and changes nothing.
 *
 * Consumers already count a live incoming message from its MessageReceived (upsert `notify`):
 * that is all the sandbox gives them. So an increment becomes `unread_delta` only for the part
 * the batch's live messages do not account for (`liveIncrements`, see below): messages that
 * arrived while we were offline (`append`), or whose upsert Baileys released in another batch.
 * Without this every live message would be counted twice.
 */
export function chatUpdateEvents(
  updates: BaileysEventMap['chats.update'],
  liveIncrements: ReadonlyMap<string, number> = new Map(),
  ctx: TranslateContext = {},
): SessionEvent[] {
  const unaccounted = new Map(liveIncrements);
  const events: SessionEvent[] = [];
  for (const update of updates) {
    const jid = chatJid(update.id, ctx);
    if (!jid) continue;
    const changes = chatChanges(update);
    if (changes.unread_delta !== undefined) {
      const live = unaccounted.get(jid) ?? 0;
      unaccounted.set(jid, Math.max(0, live - changes.unread_delta));
      const rest = changes.unread_delta - live;
      if (rest > 0) changes.unread_delta = rest;
      else delete changes.unread_delta;
    }
    if (Object.keys(changes).length) events.push({ type: 'ChatUpdated', data: { jid, changes } });
  }
  return events;
}

/**
 * Per chat, the unread increments Baileys made for the live (`notify`) messages of a batch, by
 * Baileys' own rule (a real message, not ours, not a stub), so they can be told apart from the
 * increments of messages consumers do not count.
 */
export function liveUnreadIncrements(upsert: BaileysEventMap['messages.upsert'] | undefined, ctx: TranslateContext = {}): Map<string, number> {
  const counts = new Map<string, number>();
  if (!upsert || upsert.type !== 'notify') return counts;
  for (const message of upsert.messages) {
    if (!message.key.remoteJid || !isRealMessage(message) || !shouldIncrementChatUnread(message)) continue;
    // Keyed as the messages' chats are, so the increments meet their chat updates.
    const chat = chatJid(message.key.remoteJid, ctx, message.key.remoteJidAlt);
    if (chat) counts.set(chat, (counts.get(chat) ?? 0) + 1);
  }
  return counts;
}

function chatChanges(update: ChatUpdate): ChatChanges {
  const changes: ChatChanges = {};
  if (update.name) changes.name = update.name;
  if ('archived' in update && update.archived !== undefined) changes.archived = !!update.archived;
  // Pin and mute actions send null to undo.
  if ('pinned' in update && update.pinned !== undefined) changes.pinned = !!update.pinned && update.pinned > 0;
  if ('muteEndTime' in update && update.muteEndTime !== undefined) changes.mute_end_ms = muteEndMs(update.muteEndTime) ?? 0;
  const unread = update.unreadCount;
  if (typeof unread === 'number') {
    if (unread > 0) changes.unread_delta = unread;
    else if (unread === 0) Object.assign(changes, { unread_count: 0, marked_as_unread: false });
    else changes.marked_as_unread = true;
  }
  if (typeof update.markedAsUnread === 'boolean') changes.marked_as_unread = update.markedAsUnread;
  const last = toInt(update.conversationTimestamp);
  if (last) changes.last_message_s = last;
  return changes;
}

export function chatsDeleteEvents(jids: BaileysEventMap['chats.delete'], ctx: TranslateContext = {}): SessionEvent[] {
  return jids
    .map((id) => chatJid(id, ctx))
    .filter((jid): jid is string => !!jid)
    .map((jid) => ({ type: 'ChatUpdated', data: { jid, changes: { deleted: true } } }));
}

/**
 * One history sync chunk: HistorySyncReceived events (chats and messages split into slices, so
 * no stored event grows without bound) plus LidMappingLearned with every phone↔LID pair the chunk
 * reveals: Baileys' own pair list, the conversations' pn/lid jids, the contacts it derived and
 * the messages' alternate jids.
 *
 * The chats travel inside HistorySyncReceived, not in a separate ChatsUpserted: the HistorySync
 * webhook carries the synced conversations, and the chats read model takes them from this event
 * (as from the sandbox's); a second event with the same chats would store them twice.
 */
export function historyEvents(set: BaileysEventMap['messaging-history.set'], outer: TranslateContext): SessionEvent[] {
  const pairs = lidPairs(set);
  // The chunk's own pairs address its chats and messages, so the history keys people as live does.
  const known = new Map(pairs.map((p) => [p.lid, p.pn]));
  const ctx: TranslateContext = { ...outer, pnOf: (lid) => known.get(lid) ?? outer.pnOf?.(lid) };
  const chats = set.chats.map((c) => chatInfoOf(c, ctx)).filter((c): c is ChatInfo => !!c);
  const since = outer.historySinceS ?? 0;
  const messages = set.messages
    .map((m) => translateMessage(m, ctx))
    .filter((m): m is NonNullable<typeof m> => !!m && m.timestamp_s >= since);
  const header = compact({
    sync_type: syncTypeName(set.syncType),
    progress: set.progress === null || set.progress === undefined ? undefined : clampPercent(set.progress),
    is_latest: set.isLatest,
  });
  const events: SessionEvent[] = [];
  const chunks = Math.max(1, Math.ceil(chats.length / HISTORY_CHATS_PER_EVENT), Math.ceil(messages.length / HISTORY_MESSAGES_PER_EVENT));
  for (let i = 0; i < chunks; i++) {
    events.push({
      type: 'HistorySyncReceived',
      data: {
        ...header,
        chats: chats.slice(i * HISTORY_CHATS_PER_EVENT, (i + 1) * HISTORY_CHATS_PER_EVENT),
        messages: messages.slice(i * HISTORY_MESSAGES_PER_EVENT, (i + 1) * HISTORY_MESSAGES_PER_EVENT),
      },
    });
  }
  if (pairs.length) events.push({ type: 'LidMappingLearned', data: { pairs } });
  return events;
}

function syncTypeName(type: proto.HistorySync.HistorySyncType | null | undefined): string {
  if (type === null || type === undefined) return 'UNKNOWN';
  return proto.HistorySync.HistorySyncType[type] ?? String(type);
}

function clampPercent(value: number): number {
  return Math.min(100, Math.max(0, Math.round(value)));
}

function lidPairs(set: BaileysEventMap['messaging-history.set']): LidPair[] {
  const fromKeys = messageLidPairs(set.messages).map((p): [string, string] => [p.pn, p.lid]);
  const candidates: [string | null | undefined, string | null | undefined][] = [
    ...(set.lidPnMappings ?? []).map((m): [string, string] => [m.pn, m.lid]),
    ...set.chats.flatMap((c): [string | null | undefined, string | null | undefined][] => [
      [c.id, c.lidJid],
      [c.pnJid, c.id],
    ]),
    ...set.contacts.flatMap((c): [string | undefined, string | undefined][] => [
      [c.phoneNumber, c.lid],
      [c.id, c.lid],
      [c.phoneNumber, c.id],
    ]),
    ...fromKeys,
  ];
  return uniquePairs(candidates);
}
