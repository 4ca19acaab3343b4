import type { BaileysEventMap, WAMessageKey } from '@whiskeysockets/baileys';
import { isLid, normalizeJid } from './jid.js';

/**
 * The LIDs one emission of Baileys names people and chats by: in message keys, receipts,
 * presences and chat changes. Those a connection cannot name by phone number yet are looked up
 * in Baileys' own mapping before the emission is translated.
 */
export function lidsIn(batch: Partial<BaileysEventMap>): string[] {
  const found = new Set<string>();
  const add = (jid: string | null | undefined) => {
    const normalized = normalizeJid(jid);
    if (normalized && isLid(normalized)) found.add(normalized);
  };
  const addKey = (key: WAMessageKey | null | undefined) => {
    add(key?.remoteJid);
    add(key?.participant);
  };
  for (const m of batch['messages.upsert']?.messages ?? []) addKey(m.key);
  for (const u of batch['messages.update'] ?? []) addKey(u.key);
  for (const r of batch['message-receipt.update'] ?? []) {
    addKey(r.key);
    add(r.receipt.userJid);
  }
  const presence = batch['presence.update'];
  if (presence) {
    add(presence.id);
    for (const jid of Object.keys(presence.presences)) add(jid);
  }
  for (const c of batch['chats.update'] ?? []) add(c.id);
  for (const c of batch['chats.upsert'] ?? []) add(c.id);
  for (const jid of batch['chats.delete'] ?? []) add(jid);
  return [...found];
}
