import type { NetworkConnection } from '../sessions/port.js';
import { networkCall } from '../sessions/network-call.js';
import type { SessionManager } from '../sessions/session-manager.js';

/**
 * Runs one operation on an instance's live connection (409 not_connected without one), its
 * failures said in the API's terms as the session manager says them.
 */
export async function onNetwork<T>(manager: SessionManager, instanceId: string, op: (connection: NetworkConnection) => Promise<T>): Promise<T> {
  const connection = manager.connection(instanceId);
  return networkCall(() => op(connection));
}
