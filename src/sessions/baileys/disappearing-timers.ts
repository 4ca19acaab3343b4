import { getContentType, normalizeMessageContent, type BaileysEventMap, type proto } from '@whiskeysockets/baileys';
import type { AuthStateStore } from '../port.js';
import { normalizeJid } from './jid.js';

/** Where the timers live in the session's durable store (beside Baileys' own keys, wiped with them). */
const TIMERS = 'disappearing-timer';

/**
 * Each chat's disappearing-messages timer (seconds, 0 off), so what the gateway sends into a
 * disappearing chat disappears too: the network expects every message of such a chat to carry
 * the timer (`contextInfo.expiration`), and one without it stays forever on both phones. Learnt
 * from what the network reports (a timer change, a synced or updated chat, the timer every
 * message of such a chat carries) and kept in the session's store, so a reconnect or a restart
 * still knows it. Groups carry theirs in the group metadata instead.
 */
export class DisappearingTimers {
  private readonly known = new Map<string, number>();

  constructor(private readonly store: AuthStateStore) {}

  /**
   * The timer changes one emission reports, per chat (under each jid the chat is known by);
   * remembered at once, written by the caller through `save` in its credentials order.
   */
  observe(batch: Partial<BaileysEventMap>, addressOf: (jid: string) => string | undefined): Record<string, number> {
    const changes: Record<string, number> = {};
    const set = (jids: (string | null | undefined)[], seconds: number) => {
      for (const raw of jids) {
        const jid = normalizeJid(raw);
        if (!jid || jid.endsWith('@g.us')) continue;
        for (const key of [jid, addressOf(jid)]) {
          if (!key || this.known.get(key) === seconds) continue;
          this.known.set(key, seconds);
          changes[key] = seconds;
        }
      }
    };
    const chats = [...(batch['chats.upsert'] ?? []), ...(batch['chats.update'] ?? []), ...(batch['messaging-history.set']?.chats ?? [])];
    for (const chat of chats) {
      if (!('ephemeralExpiration' in chat) || chat.ephemeralExpiration === undefined) continue;
      set([chat.id], Math.max(0, Number(chat.ephemeralExpiration ?? 0)) || 0);
    }
    for (const message of batch['messages.upsert']?.messages ?? []) {
      const expiration = expirationOf(message.message);
      if (expiration > 0) set([message.key.remoteJid, message.key.remoteJidAlt], expiration);
    }
    return changes;
  }

  async save(changes: Record<string, number>): Promise<void> {
    if (Object.keys(changes).length > 0) await this.store.set({ [TIMERS]: changes });
  }

  /** The timer of a 1:1 chat by any of its jids (0 when off or never seen). */
  async of(...jids: string[]): Promise<number> {
    const missing = jids.filter((jid) => !this.known.has(jid));
    if (missing.length) {
      const stored = await this.store.get(TIMERS, missing);
      for (const jid of missing) this.known.set(jid, typeof stored[jid] === 'number' ? (stored[jid] as number) : 0);
    }
    return jids.map((jid) => this.known.get(jid) ?? 0).find((s) => s > 0) ?? 0;
  }
}

/** The timer a message carries: every message of a disappearing chat names it in its contextInfo. */
function expirationOf(message: proto.IMessage | null | undefined): number {
  const content = normalizeMessageContent(message);
  const type = getContentType(content ?? undefined);
  if (!content || !type || type === 'protocolMessage') return 0;
  const inner = content[type] as { contextInfo?: proto.IContextInfo | null } | null | undefined;
  return inner && typeof inner === 'object' ? Number(inner.contextInfo?.expiration ?? 0) || 0 : 0;
}
