import { BlockList, isIP } from 'node:net';

/**
 * Where the gateway may send requests on a tenant's behalf (webhooks, helpdesk, media).
 * CONTRACT.md: https only, never loopback, private, link-local or metadata addresses, unless
 * ALLOW_PRIVATE_TARGETS is on (development and tests).
 */
const blockedV4 = new BlockList();
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
  blockedV4.addSubnet(net, prefix, 'ipv4');
}

/** IPv6 ranges refused whole: nothing public lives there, whatever they embed. */
const blockedV6 = new BlockList();
for (const [net, prefix] of [
  // Unspecified, loopback, and the deprecated IPv4-compatible ::a.b.c.d (never routed).
  ['::', 96],
  // SIIT IPv4-translated ::ffff:0:a.b.c.d.
  ['::ffff:0:0:0', 96],
  ['100::', 64],
  // Teredo: it tunnels to an IPv4 address hidden (obfuscated) in the address.
  ['2001::', 32],
  ['2001:2::', 48],
  ['2001:10::', 28],
  ['2001:20::', 28],
  ['2001:db8::', 32],
  ['3fff::', 20],
  ['5f00::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  // Site-local, deprecated but still routed inside some networks.
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  blockedV6.addSubnet(net, prefix, 'ipv6');
}

const BLOCKED_NAMES = /(^|\.)(localhost|localdomain|internal|local)$|^metadata(\.|$)/i;

/** True for an address that is safe to call: public unicast only. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !blockedV4.check(address, 'ipv4');
  if (family !== 6) return false;
  const bytes = ipv6Bytes(address);
  if (bytes === null) return false;
  const embedded = embeddedIpv4(bytes);
  if (embedded !== null) return isPublicAddress(embedded);
  return !blockedV6.check(formatIpv6(bytes), 'ipv6');
}

/**
 * The IPv4 address an IPv6 address stands for, where the packet would in effect go there:
 * IPv4-mapped (::ffff:a.b.c.d, however it is written), 6to4 (2002:AABB:CCDD::/48) and NAT64
 * (64:ff9b::/96 well-known, 64:ff9b:1::/48 local-use, address in the last 32 bits), and ISATAP
 * (interface id 0:5efe or 200:5efe, then the address).
 */
function embeddedIpv4(bytes: Uint8Array): string | null {
  const zeros = (from: number, to: number) => bytes.subarray(from, to).every((b) => b === 0);
  const v4 = (at: number) => `${bytes[at]}.${bytes[at + 1]}.${bytes[at + 2]}.${bytes[at + 3]}`;
  if (zeros(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return v4(12);
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return v4(2);
  if (bytes[0] === 0x00 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b) {
    if (zeros(4, 12)) return v4(12);
    if (bytes[4] === 0x00 && bytes[5] === 0x01) return v4(12);
  }
  // ISATAP interface id (any prefix): the site's ISATAP router tunnels it to that IPv4 address.
  if ((bytes[8] === 0x00 || bytes[8] === 0x02) && bytes[9] === 0x00 && bytes[10] === 0x5e && bytes[11] === 0xfe) return v4(12);
  return null;
}

/** The 16 bytes of an IPv6 address in any textual form (::, embedded dotted quad, zone id); null if it is not one. */
function ipv6Bytes(address: string): Uint8Array | null {
  const text = address.replace(/%.*$/, '');
  if (isIP(text) !== 6) return null;
  let groups: number[] = [];
  const halves = text.split('::');
  const parse = (part: string): number[] => {
    if (part === '') return [];
    return part.split(':').flatMap((group) => {
      if (group.includes('.')) {
        const [a, b, c, d] = group.split('.').map(Number) as [number, number, number, number];
        return [(a << 8) | b, (c << 8) | d];
      }
      return [parseInt(group, 16)];
    });
  };
  const head = parse(halves[0] as string);
  const tail = halves.length > 1 ? parse(halves[1] as string) : [];
  groups = halves.length > 1 ? [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail] : head;
  if (groups.length !== 8) return null;
  const bytes = new Uint8Array(16);
  groups.forEach((g, i) => {
    bytes[2 * i] = g >> 8;
    bytes[2 * i + 1] = g & 0xff;
  });
  return bytes;
}

function formatIpv6(bytes: Uint8Array): string {
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((((bytes[i] as number) << 8) | (bytes[i + 1] as number)).toString(16));
  return groups.join(':');
}

export type UrlVerdict = { ok: true; url: URL } | { ok: false; reason: string };

/**
 * The check a URL passes when it is configured. The address is checked again when a connection
 * is made (outbound-agent.ts): a name against what it resolves to then (DNS rebinding), a literal
 * address against the rules in force then.
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
  // A fully qualified name may end in dots (`localhost.`): the rules apply to the name without them.
  const name = host.replace(/\.+$/, '');
  if (BLOCKED_NAMES.test(name) || !name.includes('.')) return { ok: false, reason: 'must name a public host' };
  return { ok: true, url };
}
