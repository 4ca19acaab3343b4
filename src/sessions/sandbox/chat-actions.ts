import { createHash } from 'node:crypto';
import { parseAddress, requireGroupJid } from './addresses.js';
import type { SandboxConnection } from './connection.js';

/**
 * Chat actions on the sandbox. The simulated phones have no screen on which an archived or muted
 * chat would look different, so the network only has to accept the action from a linked device:
 * it checks the connection and the address, as the real network's app-state sync would, and the
 * gateway records what changed. Address errors name `phone`, the field of the chat routes.
 */
export async function modifyChat(conn: SandboxConnection, chat: string): Promise<void> {
  // Every action is accepted as sent: nothing on the sandbox depends on chat-level state.
  conn.connectedPhone();
  parseAddress('phone', chat);
}

/**
 * A group's invite code. Sandbox phones cannot join by link, so a stable code derived from the
 * group id is all a client can observe of one; it has the real codes' 22-character shape.
 */
export async function groupInviteCode(conn: SandboxConnection, group: string): Promise<string> {
  conn.connectedPhone();
  const jid = requireGroupJid('group', group);
  return createHash('sha256').update(`sandbox-invite:${jid}`).digest('base64url').slice(0, 22);
}
