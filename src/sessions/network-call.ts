import { DomainError } from '../domain/errors.js';
import { NotConnectedError, type NetworkConnection } from './port.js';

/** What a request for a session that is not open gets, wherever it finds that out. */
export const notConnected = () => new DomainError('not_connected', 'the instance is not connected');

/**
 * One call to the network, its failure said as a domain error (mapped to HTTP with every other
 * one in src/api/errors.ts): a connection that is not open is not_connected, anything else the
 * network threw is upstream_failed; the driver's own DomainErrors (an unknown address, a bad
 * argument) pass through.
 */
export async function networkCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof DomainError) throw err;
    if (err instanceof NotConnectedError) throw notConnected();
    throw new DomainError('upstream_failed', `the network refused the request: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** Where a network operation finds an instance's open connection (the session manager). */
export interface LiveConnections {
  /** The open connection, or not_connected. */
  connection(instanceId: string): NetworkConnection;
}

/** Runs one operation on an instance's open connection, its failures said as networkCall says them. */
export async function onNetwork<T>(sessions: LiveConnections, instanceId: string, op: (connection: NetworkConnection) => Promise<T>): Promise<T> {
  const connection = sessions.connection(instanceId);
  return networkCall(() => op(connection));
}
