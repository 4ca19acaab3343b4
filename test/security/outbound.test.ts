import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { createOutboundAgent } from '../../src/infra/http/outbound-agent.js';
import { checkOutboundUrl, isPublicAddress } from '../../src/infra/http/outbound-policy.js';
import { BlockedAddressError } from '../../src/infra/http/public-lookup.js';
import { expectError, newInstance } from '../support/gateway.js';
import { useGateway } from '../support/use-gateway.js';

/** IPv6 literals that reach loopback, private, link-local or metadata addresses. */
const EMBEDDING_PRIVATE = [
  '::127.0.0.1', // IPv4-compatible
  '::7f00:1',
  '::ffff:127.0.0.1', // IPv4-mapped, dotted
  '::ffff:7f00:1', // IPv4-mapped, hex (how URL writes it)
  '::ffff:a9fe:a9fe', // mapped metadata address
  '::ffff:0:7f00:1', // SIIT IPv4-translated
  '::ffff:0:a00:1',
  '2002:7f00:1::', // 6to4 of 127.0.0.1
  '2002:a9fe:a9fe::1', // 6to4 of 169.254.169.254
  '2002:c0a8:101::', // 6to4 of 192.168.1.1
  '64:ff9b::a9fe:a9fe', // NAT64 well-known prefix
  '64:ff9b::7f00:1',
  '64:ff9b:1::a00:1', // NAT64 local-use prefix
  '2001:0:4136:e378:8000:63bf:3fff:fdd2', // Teredo
  '2a00:1450::5efe:a00:1', // ISATAP of 10.0.0.1 under a public prefix
  '2a00:1450::200:5efe:7f00:1',
  'fec0::1', // site-local
  'fc00::1',
  'fd12:3456::1',
  'fe80::1',
  '::1',
  '::',
  '0:0:0:0:0:0:0:1',
];

describe('security: outbound addresses (finding e)', () => {
  it('IPv6 literals embedding private IPv4, and the private IPv6 ranges, are not public', () => {
    for (const address of EMBEDDING_PRIVATE) expect(isPublicAddress(address), address).to.equal(false);
    for (const address of ['2606:4700:4700::1111', '2a00:1450:4001:800::200e', '::ffff:8.8.8.8', '2002:808:808::1', '64:ff9b::808:808', '8.8.8.8']) {
      expect(isPublicAddress(address), address).to.equal(true);
    }
  });

  it('checkOutboundUrl refuses them in a URL, however URL normalises them', () => {
    for (const address of EMBEDDING_PRIVATE) {
      const verdict = checkOutboundUrl(`https://[${address}]/hook`, false);
      expect(verdict.ok, address).to.equal(false);
    }
    expect(checkOutboundUrl('https://[2606:4700:4700::1111]/hook', false).ok).to.equal(true);
  });

  describe('at save time, through the API (ALLOW_PRIVATE_TARGETS=false)', () => {
    let instance: { id: string };
    const { t, owner } = useGateway({ ALLOW_PRIVATE_TARGETS: 'false' });
    before(async () => {
      instance = await newInstance(t.api, owner);
    });

    it('refuses every such webhook URL with 400 naming the field, and keeps the old one', async () => {
      await t.api('POST', `/instances/${instance.id}/webhook`, { token: owner.jwt, body: { webhookURL: 'https://hooks.example.com/ok', events: 'All' } });
      for (const address of ['::127.0.0.1', '::ffff:0:7f00:1', '2002:7f00:1::', '64:ff9b::a9fe:a9fe', 'fec0::1', '::ffff:7f00:1', '2001:0:4136:e378:8000:63bf:3fff:fdd2']) {
        const url = `https://[${address}]/hook`;
        const set = await t.api('POST', `/instances/${instance.id}/webhook`, { token: owner.jwt, body: { webhookURL: url } });
        expectError(set, 400, 'invalid_input');
        expect(set.body.error.details[0].field, url).to.equal('webhookURL');
        expectError(await t.api('PUT', '/instances/create', { token: owner.jwt, body: { name: 'hooked', webhook: url } }), 400, 'invalid_input');
        expectError(await t.api('PATCH', `/instances/${instance.id}`, { token: owner.jwt, body: { name: 'hooked', webhook: url } }), 400, 'invalid_input');
      }
      const now = await t.api('GET', `/instances/${instance.id}/webhook`, { token: owner.jwt });
      expect(now.body.data.webhook).to.equal('https://hooks.example.com/ok');
    });

    it('accepts a public IPv6 literal', async () => {
      const set = await t.api('POST', `/instances/${instance.id}/webhook`, { token: owner.jwt, body: { webhookURL: 'https://[2606:4700:4700::1111]/hook' } });
      expect(set.status, set.text).to.equal(200);
    });
  });

  describe('at connection time', () => {
    let server: Server;
    let port: number;
    before(async () => {
      server = createServer((_req, res) => res.end('reached'));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });
    after(async () => new Promise<void>((resolve) => server.close(() => resolve())));

    it('a literal private address is refused before a socket opens, though no lookup runs for it', async () => {
      const agent = createOutboundAgent({ allowPrivate: false, timeoutMs: 2000 });
      try {
        let reached = false;
        const err = await request(`http://127.0.0.1:${port}/`, { dispatcher: agent }).then(
          async (res) => ((reached = (await res.body.text()) === 'reached'), null),
          (e: unknown) => e,
        );
        expect(reached, 'the private address was reached').to.equal(false);
        const blocked = err instanceof BlockedAddressError || (err as { cause?: unknown })?.cause instanceof BlockedAddressError;
        expect(blocked, String(err)).to.equal(true);
      } finally {
        await agent.close();
      }
    });

    it('with ALLOW_PRIVATE_TARGETS the same address is reached', async () => {
      const agent = createOutboundAgent({ allowPrivate: true, timeoutMs: 2000 });
      try {
        const res = await request(`http://127.0.0.1:${port}/`, { dispatcher: agent });
        expect(await res.body.text()).to.equal('reached');
      } finally {
        await agent.close();
      }
    });
  });
});
