import type { BaileysEventMap, WAMessageKey } from '@whiskeysockets/baileys';
import { LRUCache } from 'lru-cache';
import type { NetworkMessage } from '../../domain/session/events.js';
import { isGroupJid, normalizeJid } from './jid.js';

type ReadKey = Pick<WAMessageKey, 'remoteJid' | 'participant'>;

/**
 * Where a read receipt for a received message goes: where the message came from. Baileys
 * acknowledges a message on the jid it arrived on, a LID for a person who hides their number; a
 * read sent to their phone jid instead is not the same chat to the network. The gateway names
 * people by phone jid (CONTRACT.md, "Addresses"), so the jid a message came from is remembered
 * here for the messages this connection received, and read from the stored message otherwise.
 */
export class ReadKeys {
  private readonly recent = new LRUCache<string, { key: ReadKey; chats: string[] }>({ max: 5000 });

  /** Remembers the keys of the messages others sent in one of Baileys' emissions. */
  observe(batch: Partial<BaileysEventMap>, addressOf: (jid: string) => string | undefined): void {
    for (const { key } of batch['messages.upsert']?.messages ?? []) {
      const chat = normalizeJid(key.remoteJid);
      if (!key.id || key.fromMe || !chat) continue;
      const alternate = normalizeJid(key.remoteJidAlt);
      const chats = [chat, ...(alternate ? [alternate] : []), addressOf(chat)].filter((c): c is string => !!c);
      this.recent.set(key.id, { key: { remoteJid: key.remoteJid, ...(key.participant ? { participant: key.participant } : {}) }, chats });
    }
  }

  /** The key of a remembered message of `chat`, when this connection received it. */
  remembered(id: string, chat: string): WAMessageKey | undefined {
    const entry = this.recent.get(id);
    if (!entry || !entry.chats.includes(chat)) return undefined;
    return { ...entry.key, id, fromMe: false };
  }
}

/** The read key of a stored received message: the jid it came on (its LID when addressed by LID). */
export function readKeyOfStored(message: NetworkMessage): WAMessageKey {
  const byLid = message.addressing_mode === 'lid';
  if (message.is_group || isGroupJid(message.chat)) {
    const author = byLid ? (message.sender_lid ?? message.sender) : (message.sender_pn ?? message.sender);
    return { remoteJid: message.chat, id: message.id, fromMe: false, participant: author };
  }
  return { remoteJid: byLid && message.chat_lid ? message.chat_lid : message.chat, id: message.id, fromMe: false };
}
