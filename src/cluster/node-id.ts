import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/**
 * This process's identity among the nodes: host and pid for whoever reads the leases, plus random
 * bits so a restarted process (same host, reused pid) never takes an old lease for its own.
 */
export function newNodeId(): string {
  return `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
}
