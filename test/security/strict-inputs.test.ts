import { expect } from 'chai';
import WebSocket from 'ws';
import { expectError, newInstance } from '../support/gateway.js';
import { useGateway } from '../support/use-gateway.js';

/** Issue 27, finding 10: inputs that looked close enough to be taken. */
describe('security: near-miss inputs are refused', () => {
  const { t, owner } = useGateway({ ALLOW_PRIVATE_TARGETS: 'false' });
  let cookie: string;
  before(async () => {
    const res = await t.api('POST', '/app/session', { body: { email: owner.email, password: owner.password } });
    cookie = (res.headers.get('set-cookie') ?? '').split(';')[0] as string;
  });

  it("takes a cookie-carried write only with X-Gateway-App: 1, not any value", async () => {
    for (const value of ['0', 'false', 'yes', ' ']) {
      const res = await t.api('PUT', '/instances/create', { headers: { cookie, 'x-gateway-app': value }, body: { name: 'forged' } });
      expect(res.status, `X-Gateway-App: ${value}`).to.equal(401);
    }
    const res = await t.api('PUT', '/instances/create', { headers: { cookie, 'x-gateway-app': '1' }, body: { name: 'from the app' } });
    expect(res.status, res.text).to.equal(200);
  });

  it("opens a stream with the cookie only from the gateway's origin, scheme included", async () => {
    const { id } = await newInstance(t.api, owner);
    const status = (origin: string) =>
      new Promise<number>((resolve) => {
        const ws = new WebSocket(`${t.gateway.url.replace('http', 'ws')}/instances/${id}/events/ws`, { headers: { cookie, origin } });
        ws.once('open', () => (ws.close(), resolve(101)));
        ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? -1));
        ws.once('error', () => resolve(-1));
      });
    expect(await status(t.gateway.url.replace('http:', 'https:'))).to.equal(403);
    expect(await status(t.gateway.url)).to.equal(101);
  });

  it('refuses webhook URLs naming a refused host with a trailing dot at save', async () => {
    const { id } = await newInstance(t.api, owner);
    for (const url of ['https://localhost./', 'https://foo.localhost./', 'https://localhost../', 'https://metadata.google.internal./', 'https://com./']) {
      expectError(await t.api('POST', `/instances/${id}/webhook`, { token: owner.jwt, body: { webhookURL: url, events: 'All' } }), 400, 'invalid_input');
    }
    expect((await t.api('POST', `/instances/${id}/webhook`, { token: owner.jwt, body: { webhookURL: 'https://example.com./hook', events: 'All' } })).status).to.equal(200);
  });

  it('refuses a sign-up e-mail with a NUL or another control character', async () => {
    for (const email of ['a\u0000b@example.com', 'ab@exa\u0000mple.com', 'a\u0007b@example.com', 'ab@example.com\u0000']) {
      expectError(await t.api('POST', '/auth/signup', { body: { email, password: 'correct horse battery' } }), 400, 'invalid_input');
    }
  });
});
