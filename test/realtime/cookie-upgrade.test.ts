/* eslint-disable @typescript-eslint/no-explicit-any -- bodies are read field by field */
import { expect } from 'chai';
import WebSocket from 'ws';
import { newAccount, newInstance, startTestGateway, type TestAccount, type TestGateway } from '../support/gateway.js';
import { newPhone, pairByQr, waitFor } from '../support/sandbox.js';

/**
 * The web app's stream is opened by the browser with the session cookie (SameSite=Strict,
 * http-only). A WebSocket has no same-origin rule and cannot carry the app's CSRF header, so the
 * cookie counts only on an upgrade whose Origin is the gateway's own.
 */
describe('realtime stream: the web app session cookie on the upgrade', function () {
  this.timeout(30_000);
  let t: TestGateway;
  let owner: TestAccount;
  let cookie: string;
  before(async () => {
    t = await startTestGateway({ MESSAGING_NETWORK: 'sandbox' });
    owner = await newAccount(t.api);
    const res = await t.api('POST', '/app/session', { body: { email: owner.email, password: owner.password } });
    expect(res.headers.get('set-cookie')).to.match(/SameSite=Strict/);
    cookie = (res.headers.get('set-cookie') ?? '').split(';')[0] as string;
  });
  after(async () => t.stop());

  function upgrade(path: string, headers: Record<string, string>): Promise<{ status: number; ws?: WebSocket; bodies: any[] }> {
    const ws = new WebSocket(t.gateway.url.replace('http', 'ws') + path, { headers });
    const bodies: any[] = [];
    ws.on('message', (data) => bodies.push(JSON.parse(data.toString())));
    return new Promise((resolve) => {
      ws.once('open', () => resolve({ status: 101, ws, bodies }));
      ws.once('unexpected-response', (_req, res) => resolve({ status: res.statusCode ?? -1, bodies }));
      ws.once('error', () => resolve({ status: -1, bodies }));
    });
  }

  it('opens from the gateway origin with the cookie alone, and streams the session events', async () => {
    const { id } = await newInstance(t.api, owner);
    const client = await upgrade(`/instances/${id}/events/ws`, { cookie, origin: t.gateway.url });
    expect(client.status).to.equal(101);
    const phone = await newPhone(t.api, owner);
    await pairByQr(t.api, owner, id, phone.phone);
    await waitFor(() => client.bodies.some((b) => b.type === 'Connected'), 'the Connected event on the stream', 10_000);
    client.ws?.close();
  });

  it('refuses the cookie from another origin, an opaque origin or without an origin (403, as such)', async () => {
    const { id } = await newInstance(t.api, owner);
    const path = `/instances/${id}/events/ws`;
    expect((await upgrade(path, { cookie, origin: 'http://evil.example' })).status).to.equal(403);
    expect((await upgrade(path, { cookie, origin: t.gateway.url.replace('127.0.0.1', 'localhost') })).status).to.equal(403);
    expect((await upgrade(path, { cookie, origin: 'null' })).status).to.equal(403);
    expect((await upgrade(path, { cookie })).status).to.equal(403);
    // Without the cookie either, it is the usual missing credentials.
    expect((await upgrade(path, { origin: t.gateway.url })).status).to.equal(401);
    // A page of another origin that holds a token (not ambient, so no forgery) still may.
    const withToken = await upgrade(`${path}?access_token=${owner.jwt}`, { cookie, origin: 'http://evil.example' });
    expect(withToken.status).to.equal(101);
    withToken.ws?.close();
  });

  it('from the gateway origin, the cookie of another account is refused for this instance (403), a bad cookie is 401', async () => {
    const { id } = await newInstance(t.api, owner);
    const other = await newAccount(t.api);
    const res = await t.api('POST', '/app/session', { body: { email: other.email, password: other.password } });
    const otherCookie = (res.headers.get('set-cookie') ?? '').split(';')[0] as string;
    expect((await upgrade(`/instances/${id}/events/ws`, { cookie: otherCookie, origin: t.gateway.url })).status).to.equal(403);
    expect((await upgrade(`/instances/${id}/events/ws`, { cookie: 'gw_session=not.a.jwt', origin: t.gateway.url })).status).to.equal(401);
  });
});
