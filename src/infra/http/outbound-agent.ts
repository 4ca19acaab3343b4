import { isIP } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { isPublicAddress } from './outbound-policy.js';
import { BlockedAddressError, publicOnlyLookup } from './public-lookup.js';

export interface OutboundAgentOptions {
  /** ALLOW_PRIVATE_TARGETS: skip the connect-time address check (development, tests). */
  allowPrivate: boolean;
  /** Connections kept per origin; also the most requests in flight to one origin. Default: no cap. */
  connectionsPerOrigin?: number;
  /** Connect, headers and body timeouts, each. */
  timeoutMs: number;
}

/**
 * One keep-alive connection pool per origin for calls made on a tenant's behalf (webhooks, media).
 * Every new connection is checked on the address it dials: a name through the policy lookup, a
 * literal address (which the socket never looks up) here. Reused connections were checked when
 * they were opened.
 */
export function createOutboundAgent(options: OutboundAgentOptions): Agent {
  return new Agent({
    ...(options.connectionsPerOrigin === undefined ? {} : { connections: options.connectionsPerOrigin }),
    pipelining: 1,
    keepAliveTimeout: 10_000,
    keepAliveMaxTimeout: 60_000,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    connect: options.allowPrivate ? { timeout: options.timeoutMs } : publicOnlyConnector(options.timeoutMs),
  });
}

/** undici's connector, refusing a literal address that is not public before any socket opens. */
function publicOnlyConnector(timeoutMs: number): buildConnector.connector {
  const connect = buildConnector({ timeout: timeoutMs, lookup: publicOnlyLookup });
  return (target, callback) => {
    const host = target.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) !== 0 && !isPublicAddress(host)) {
      callback(new BlockedAddressError(`${host} is not a public address`), null);
      return;
    }
    connect(target, callback);
  };
}
