import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isPublicAddress } from '../infra/http/outbound-policy.js';

/** A media host resolved to an address the outbound policy forbids. */
export class BlockedAddressError extends Error {
  override name = 'BlockedAddressError';
  readonly code = 'EBLOCKEDADDRESS';
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for sockets that refuses names resolving to loopback, private, link-local or metadata
 * addresses. It runs at connection time, on the address actually dialled, so a name that passed
 * the URL check cannot be rebound to an internal address afterwards.
 */
export function guardedLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, []);
    const list = addresses as LookupAddress[];
    const blocked = list.find((a) => !isPublicAddress(a.address));
    if (blocked || list.length === 0) {
      return callback(new BlockedAddressError(`${hostname} resolves to a non-public address`), []);
    }
    if (options.all) return callback(null, list);
    const first = list[0] as LookupAddress;
    return callback(null, first.address, first.family);
  });
}
