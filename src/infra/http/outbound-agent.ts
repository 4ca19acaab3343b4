import { Agent } from 'undici';
import { publicOnlyLookup } from './public-lookup.js';

export interface OutboundAgentOptions {
  /** ALLOW_PRIVATE_TARGETS: skip the connect-time address check (development, tests). */
  allowPrivate: boolean;
  /** Connections kept per origin; also the most requests in flight to one origin. Default: no cap. */
  connectionsPerOrigin?: number;
  /** Connect, headers and body timeouts, each. */
  timeoutMs: number;
}

/**
 * One keep-alive connection pool per origin for calls made on a tenant's behalf (webhooks, media). Names are
 * resolved through the policy check on every new connection; reused connections were checked
 * when they were opened.
 */
export function createOutboundAgent(options: OutboundAgentOptions): Agent {
  return new Agent({
    ...(options.connectionsPerOrigin === undefined ? {} : { connections: options.connectionsPerOrigin }),
    pipelining: 1,
    keepAliveTimeout: 10_000,
    keepAliveMaxTimeout: 60_000,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    connect: options.allowPrivate
      ? { timeout: options.timeoutMs }
      : { timeout: options.timeoutMs, lookup: publicOnlyLookup },
  });
}
