import { parseAddress } from './addresses.js';
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
