import type { BaileysEventMap } from '@whiskeysockets/baileys';
import type { SessionEvent } from '../../domain/session/events.js';
import { compact } from './compact.js';
import { isGroupJid, normalizeJid, toInt } from './jid.js';
import { addressOf, type TranslateContext } from './message-translator.js';

/** Whether `sender` was last seen composing or recording in `chat` (see ChatStateTracker). */
export type WasTyping = (chat: string, sender: string) => boolean;

/**
 * `presence.update` mixes two things: online presence (available / unavailable, with last seen)
 * and chat state (composing / recording / paused). Baileys folds the chat state "paused" into
 * "available", so a stop of typing cannot be told from the contact coming online by the value
 * alone: in a group, presence is never per group, so "available" there is always a pause; in a
 * 1:1 chat, "available" or "unavailable" right after typing also ends the typing, which the
 * caller tells us through `wasTyping`.
 */
export function presenceEvents(update: BaileysEventMap['presence.update'], wasTyping: WasTyping, ctx: TranslateContext = {}): SessionEvent[] {
  const rawChat = normalizeJid(update.id);
  if (!rawChat) return [];
  // People by phone jid when the pair is known, as messages key them (CONTRACT.md, "Addresses").
  const chat = addressOf(rawChat, ctx).address;
  const events: SessionEvent[] = [];
  for (const [participant, data] of Object.entries(update.presences)) {
    const raw = normalizeJid(participant);
    const sender = raw ? addressOf(raw, ctx).address : chat;
    const state = data.lastKnownPresence;
    if (state === 'composing' || state === 'recording' || state === 'paused') {
      events.push({ type: 'ChatPresenceUpdated', data: { chat, sender, state } });
      continue;
    }
    if (isGroupJid(chat)) {
      events.push({ type: 'ChatPresenceUpdated', data: { chat, sender, state: 'paused' } });
      continue;
    }
    if (wasTyping(chat, sender)) events.push({ type: 'ChatPresenceUpdated', data: { chat, sender, state: 'paused' } });
    events.push({
      type: 'PresenceUpdated',
      data: compact({ jid: sender, state, last_seen_s: toInt(data.lastSeen) }),
    });
  }
  return events;
}

/**
 * Remembers who is typing where, from the ChatPresenceUpdated events we emitted, so the next
 * plain "available" can be read as the pause it usually is. Bounded: the oldest entries go first.
 */
export class ChatStateTracker {
  private readonly typing = new Set<string>();

  constructor(private readonly max = 1000) {}

  readonly wasTyping: WasTyping = (chat, sender) => this.typing.has(`${chat}|${sender}`);

  observe(events: SessionEvent[]): void {
    for (const event of events) {
      if (event.type !== 'ChatPresenceUpdated') continue;
      const key = `${event.data.chat}|${event.data.sender}`;
      this.typing.delete(key);
      if (event.data.state !== 'paused') this.typing.add(key);
    }
    for (const key of this.typing) {
      if (this.typing.size <= this.max) break;
      this.typing.delete(key);
    }
  }
}
