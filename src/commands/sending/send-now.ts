import { setTimeout as sleep } from 'node:timers/promises';
import type { OutgoingContent } from '../../domain/session/outgoing.js';
import type { NetworkConnection, SentMessage } from '../../sessions/port.js';

/**
 * Puts one message on the network under `messageId`: first, when asked (`delay_ms`), the chat
 * shows the account typing (recording, for a voice note) that long, as a person would. Used alike
 * by a send made now, a queued send and a scheduled one, so each goes out the same way.
 */
export async function sendNow(connection: NetworkConnection, to: string, content: OutgoingContent, messageId: string | undefined): Promise<SentMessage> {
  const delay = content.delay_ms ?? 0;
  if (delay > 0) {
    const state = content.kind === 'media' && content.media.kind === 'audio' && content.media.ptt ? 'recording' : 'composing';
    // Typing is a courtesy: a presence the network refuses does not stop the message.
    await connection.sendChatPresence(to, state).catch(() => undefined);
    await sleep(delay);
    await connection.sendChatPresence(to, 'paused').catch(() => undefined);
  }
  return connection.sendMessage(to, content, messageId === undefined ? {} : { messageId });
}
