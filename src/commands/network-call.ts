import { DomainError } from '../domain/errors.js';
import { NotConnectedError, type NetworkConnection } from '../sessions/port.js';
import type { SessionManager } from '../sessions/session-manager.js';

/**
 * Runs one operation on an instance's live connection, and says what went wrong in the API's
 * terms: not connected is 409 not_connected, anything else the network threw is 502; the
 * driver's own DomainErrors (an unknown address, a bad argument) pass through.
 */
export async function onNetwork<T>(manager: SessionManager, instanceId: string, op: (connection: NetworkConnection) => Promise<T>): Promise<T> {
  const connection = manager.connection(instanceId);
  try {
    return await op(connection);
  } catch (err) {
    if (err instanceof DomainError) throw err;
    if (err instanceof NotConnectedError) throw new DomainError('not_connected', 'the instance is not connected');
    throw new DomainError('upstream_failed', `the network refused the request: ${(err as Error).message}`);
  }
}
