/* eslint-disable @typescript-eslint/no-explicit-any -- bodies are read field by field */
import { expect } from 'chai';
import WebSocket from 'ws';
import type { Clock } from '../../src/infra/clock.js';
import { newAccount, newInstance, startTestGateway, type TestAccount, type TestGateway } from '../support/gateway.js';

interface Client {
  ws: WebSocket;
  closed: Promise<{ code: number; reason: string }>;
  isOpen(): boolean;
}

function open(t: TestGateway, path: string, headers: Record<string, string> = {}): Promise<Client> {
  const ws = new WebSocket(t.gateway.url.replace('http', 'ws') + path, { headers });
  let closedYet = false;
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => {
      closedYet = true;
      resolve({ code, reason: reason.toString() });
    }),
  );
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ ws, closed, isOpen: () => !closedYet }));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`status ${res.statusCode}`)));
    ws.once('error', reject);
  });
}

/** The stream closes with 4401 within `ms` (the REST refusal's 2 s, plus the check's period). */
async function closedWith4401(client: Client, ms = 2500): Promise<string> {
  const result = await Promise.race([client.closed, new Promise<null>((r) => setTimeout(() => r(null), ms))]);
  expect(result, 'the stream is still open').to.not.equal(null);
  expect(result!.code).to.equal(4401);
  return result!.reason;
}

describe('realtime stream: it lives no longer than its credential', function () {
  this.timeout(30_000);
  let offset = 0;
  const clock: Clock = { now: () => new Date(Date.now() + offset) };
  let t: TestGateway;
  let owner: TestAccount;
  before(async () => {
    t = await startTestGateway({}, { clock });
    owner = await newAccount(t.api);
  });
  after(async () => t.stop());

  const exchange = async (a: TestAccount) => (await t.api('POST', '/token', { body: { client_token: a.clientToken, client_secret: a.clientSecret } })).body.access_token as string;

  it('closes a stream opened with a JWT when that token is revoked; another token\'s stream stays', async () => {
    const { id } = await newInstance(t.api, owner);
    const victim = await exchange(owner);
    const kept = await open(t, `/instances/${id}/events/ws?access_token=${owner.jwt}`);
    const client = await open(t, `/instances/${id}/events/ws?access_token=${victim}`);
    const tokenId = (await t.api('GET', '/account/tokens', { token: victim })).body.tokens.find((x: any) => x.current).id as string;
    expect((await t.api('POST', `/account/tokens/${tokenId}/revoke`, { token: owner.jwt })).status).to.equal(200);
    expect(await closedWith4401(client)).to.match(/revoked/);
    expect(kept.isOpen()).to.equal(true);
    kept.ws.close();
  });

  it('closes JWT streams when the client secret is rotated', async () => {
    const a = await newAccount(t.api);
    const { id } = await newInstance(t.api, a);
    const client = await open(t, `/instances/${id}/events/ws`, { authorization: `Bearer ${a.jwt}` });
    const rotated = await t.api('POST', '/account/client-secret/rotate', { token: a.jwt });
    expect(rotated.status, rotated.text).to.equal(200);
    await closedWith4401(client);
  });

  it('closes a token-pair stream when the instance token is rotated', async () => {
    const a = await newAccount(t.api);
    const { id, token } = await newInstance(t.api, a);
    const client = await open(t, `/instances/${id}/events/ws`, { 'x-instance-token': token, 'x-client-token': a.clientToken });
    expect((await t.api('POST', `/instances/${id}/token/rotate`, { token: a.jwt })).status).to.equal(200);
    await closedWith4401(client);
  });

  it('closes the web app\'s cookie stream when the app signs out', async () => {
    const a = await newAccount(t.api);
    const { id } = await newInstance(t.api, a);
    const session = await t.api('POST', '/app/session', { body: { email: a.email, password: a.password } });
    const cookie = (session.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const client = await open(t, `/instances/${id}/events/ws`, { cookie, origin: t.gateway.url });
    expect((await t.api('DELETE', '/app/session', { headers: { cookie, 'x-gateway-app': '1' } })).status).to.equal(200);
    await closedWith4401(client);
  });

  it("closes a JWT stream at the token's exp", async () => {
    const a = await newAccount(t.api);
    const { id } = await newInstance(t.api, a);
    const client = await open(t, `/instances/${id}/events/ws?access_token=${a.jwt}`);
    const exp = JSON.parse(Buffer.from(a.jwt.split('.')[1] as string, 'base64url').toString()).exp as number;
    // One second before exp on the gateway's clock: still open.
    offset = (exp - 1) * 1000 - Date.now();
    await new Promise((r) => setTimeout(r, 600));
    expect(client.isOpen()).to.equal(true);
    offset = exp * 1000 - Date.now();
    expect(await closedWith4401(client, 1500)).to.match(/expired/);
  });
});
