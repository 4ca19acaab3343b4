import { BlockList, isIP } from 'node:net';

/**
 * Where the gateway may send requests on a tenant's behalf (webhooks, helpdesk, media).
 * CONTRACT.md: https only, never loopback, private, link-local or metadata addresses, unless
 * ALLOW_PRIVATE_TARGETS is on (development and tests).
 */
const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv6');
}

const BLOCKED_NAMES = /(^|\.)(localhost|localdomain|internal|local)$|^metadata(\.|$)/i;

/** True for an address that is safe to call: public unicast only. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !blocked.check(address, 'ipv4');
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped) return isPublicAddress(mapped[1] as string);
    return !blocked.check(address, 'ipv6');
  }
  return false;
}

export type UrlVerdict = { ok: true; url: URL } | { ok: false; reason: string };

/**
 * The check a URL passes when it is configured. Names are checked again against the resolved
 * address at connection time, so DNS rebinding cannot get around this.
 */
export function checkOutboundUrl(raw: string, allowPrivate: boolean): UrlVerdict {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'must be an absolute URL' };
  }
  if (url.username || url.password) return { ok: false, reason: 'must not carry credentials' };
  if (allowPrivate) {
    return url.protocol === 'https:' || url.protocol === 'http:' ? { ok: true, url } : { ok: false, reason: 'must be http(s)' };
  }
  if (url.protocol !== 'https:') return { ok: false, reason: 'must use https' };
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) {
    return isPublicAddress(host) ? { ok: true, url } : { ok: false, reason: 'must not target a private, loopback or link-local address' };
  }
  if (BLOCKED_NAMES.test(host) || !host.includes('.')) return { ok: false, reason: 'must name a public host' };
  return { ok: true, url };
}
