import { DomainError } from '../domain/errors.js';
import { NotConnectedError } from './port.js';

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
