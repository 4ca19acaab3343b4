import { hostname } from 'node:os';

/**
 * The origin other nodes reach this one at (NODE_URL, or built from where it listens). Known only
 * once the server listens: the port may be chosen then (PORT=0). A wildcard HOST is no address,
 * so the machine's hostname stands in for it (a container's name in docker compose).
 */
export function nodeAddress(nodeUrl: string | undefined, host: string, port: number): string {
  if (nodeUrl !== undefined) return nodeUrl.replace(/\/+$/, '');
  const wildcard = host === '0.0.0.0' || host === '::' || host === '';
  const name = wildcard ? hostname() : host;
  return `http://${name.includes(':') ? `[${name}]` : name}:${port}`;
}
