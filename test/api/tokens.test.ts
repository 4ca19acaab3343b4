/* eslint-disable @typescript-eslint/no-explicit-any -- answers are read field by field */
import { expect } from 'chai';
import { expectError, newAccount, newInstance, startTestGateway, type TestAccount, type TestGateway } from '../support/gateway.js';
import { waitFor } from '../support/sandbox.js';

const AGENT = { 'user-agent': 'tokens-test/1.0 (ci)' };

describe('active access tokens of an account (GET /account/tokens, POST /account/tokens/{id}/revoke)', () => {
  let t: TestGateway;
  before(async () => (t = await startTestGateway()));
  after(async () => t.stop());

  const list = (token: string) => t.api('GET', '/account/tokens', { token });
  const login = async (a: TestAccount) => (await t.api('POST', '/auth/login', { body: { email: a.email, password: a.password }, headers: AGENT })).body.access_token as string;
  const exchange = async (a: TestAccount) =>
    (await t.api('POST', '/token', { body: { client_token: a.clientToken, client_secret: a.clientSecret }, headers: AGENT })).body.access_token as string;
  const webApp = async (a: TestAccount) => {
    const res = await t.api('POST', '/app/session', { body: { email: a.email, password: a.password }, headers: AGENT });
    expect(res.status, res.text).to.equal(200);
    return /gw_session=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')?.[1] as string;
  };

  it('lists every token issued, by which route, when, to which address and client, and marks the caller\'s own', async () => {
    const a = await newAccount(t.api);
    const byPassword = await login(a);
    const byCredentials = await exchange(a);
    const byCookie = await webApp(a);
    const res = await list(byCredentials);
    expect(res.status, res.text).to.equal(200);
    expect(res.headers.get('cache-control')).to.equal('no-store');
    const tokens = res.body.tokens as any[];
    // newAccount's own sign-in, then the three above.
    expect(tokens).to.have.length(4);
    for (const token of tokens) {
      expect(Object.keys(token)).to.deep.equal(['id', 'issued_by', 'issued_at', 'expires_at', 'last_used_at', 'address', 'user_agent', 'current']);
      expect(token.id).to.match(/^at_[a-z0-9]{24}$/);
      expect(token.address).to.match(/127\.0\.0\.1$/);
      expect(Date.parse(token.expires_at) - Date.parse(token.issued_at)).to.be.within(3599_000, 3601_000);
    }
    expect(tokens.filter((x) => x.user_agent === AGENT['user-agent']).map((x) => x.issued_by).sort()).to.deep.equal(['client_credentials', 'password', 'web_app']);
    const current = tokens.filter((x) => x.current);
    expect(current).to.have.length(1);
    expect(current[0].issued_by).to.equal('client_credentials');
    // Only ids: no token, signature or hash is ever answered.
    for (const secret of [byPassword, byCredentials, byCookie, a.jwt]) {
      expect(res.text).to.not.include(secret);
      expect(res.text).to.not.include(secret.split('.')[2]);
    }
    // The cookie's session sees itself as current.
    const viaCookie = await t.api('GET', '/account/tokens', { headers: { cookie: `gw_session=${byCookie}` } });
    expect(viaCookie.body.tokens.find((x: any) => x.current).issued_by).to.equal('web_app');
  });

  it('records use to the minute, not per request', async () => {
    const a = await newAccount(t.api);
    const jwt = await exchange(a);
    const before = (await list(a.jwt)).body.tokens.find((x: any) => !x.current && x.issued_by === 'client_credentials');
    expect(before.last_used_at).to.equal(null);
    for (let i = 0; i < 5; i++) expect((await t.api('GET', '/account', { token: jwt })).status).to.equal(200);
    let used: any;
    // The use is recorded after the answer; poll for it rather than for a fixed 1 s (slow CI).
    await waitFor(async () => {
      used = (await list(a.jwt)).body.tokens.find((x: any) => x.id === before.id);
      return Boolean(used.last_used_at);
    }, 'last_used_at recorded', 10_000);
    expect(used.last_used_at).to.match(/T\d\d:\d\d:00\.000Z$/);
    expect(Date.now() - Date.parse(used.last_used_at)).to.be.within(0, 61_000);
  });

  it('revokes one token: it answers 401 at once, everywhere; the others keep working', async () => {
    const a = await newAccount(t.api);
    const instance = await newInstance(t.api, a);
    const victim = await exchange(a);
    expect((await t.api('GET', `/instances/${instance.id}`, { token: victim })).status).to.equal(200);
    const id = (await list(victim)).body.tokens.find((x: any) => x.current).id as string;

    const revoked = await t.api('POST', `/account/tokens/${id}/revoke`, { token: a.jwt });
    expect(revoked.status, revoked.text).to.equal(200);
    expect(revoked.body.id).to.equal(id);
    expect(Date.parse(revoked.body.revoked_at)).to.be.a('number').and.not.NaN;

    expectError(await t.api('GET', '/account', { token: victim }), 401, 'unauthorized');
    expectError(await t.api('GET', `/instances/${instance.id}`, { token: victim }), 401, 'unauthorized');
    expectError(await t.api('POST', '/instances/list', { token: victim, body: {} }), 401, 'unauthorized');
    expect((await t.api('GET', '/account', { token: a.jwt })).status).to.equal(200);
    expect((await list(a.jwt)).body.tokens.map((x: any) => x.id)).to.not.include(id);

    // Again: nothing new happens, the first time stands.
    const again = await t.api('POST', `/account/tokens/${id}/revoke`, { token: a.jwt });
    expect(again.status).to.equal(200);
    expect(again.body.revoked_at).to.equal(revoked.body.revoked_at);
    const history = (await t.api('GET', '/account/history?limit=1000', { token: a.jwt })).body.events as any[];
    expect(history.filter((e) => e.type === 'AccessTokenRevoked')).to.have.length(1);
  });

  it('revoking the caller\'s own token ends that session', async () => {
    const a = await newAccount(t.api);
    const mine = (await list(a.jwt)).body.tokens.find((x: any) => x.current).id as string;
    expect((await t.api('POST', `/account/tokens/${mine}/revoke`, { token: a.jwt })).status).to.equal(200);
    expectError(await list(a.jwt), 401, 'unauthorized');
  });

  it('shows sign-ins with their token id and the revocation in the account history', async () => {
    const a = await newAccount(t.api);
    const other = await exchange(a);
    const id = (await list(other)).body.tokens.find((x: any) => x.current).id as string;
    await t.api('POST', `/account/tokens/${id}/revoke`, { token: a.jwt });
    const events = (await t.api('GET', '/account/history?limit=1000', { token: a.jwt })).body.events as any[];
    const signIn = events.find((e) => e.type === 'SignInSucceeded' && e.data.jti === id);
    expect(signIn.data).to.deep.include({ method: 'client_credentials', via: 'api', user_agent: AGENT['user-agent'] });
    expect(signIn.data.address).to.match(/127\.0\.0\.1$/);
    const revocation = events.find((e) => e.type === 'AccessTokenRevoked');
    expect(revocation.data).to.deep.equal({ jti: id });
    expect(revocation.actor).to.deep.equal({ kind: 'account', id: a.accountId });
    expect(JSON.stringify(events)).to.not.include(other);
  });

  it("signing the web app out ends its token; a DELETE without the app's header only clears the cookie", async () => {
    const a = await newAccount(t.api);
    const forged = await webApp(a);
    const cookieOf = (token: string) => ({ cookie: `gw_session=${token}` });
    const bare = await t.api('DELETE', '/app/session', { headers: cookieOf(forged) });
    expect(bare.status).to.equal(200);
    expect((await t.api('GET', '/account', { headers: cookieOf(forged) })).status, 'another site cannot end a session').to.equal(200);

    const session = await webApp(a);
    const id = (await t.api('GET', '/account/tokens', { headers: cookieOf(session) })).body.tokens.find((x: any) => x.current).id as string;
    const out = await t.api('DELETE', '/app/session', { headers: { ...cookieOf(session), 'x-gateway-app': '1' } });
    expect(out.status, out.text).to.equal(200);
    expect(out.headers.get('set-cookie')).to.match(/gw_session=;.*Max-Age=0/);
    expectError(await t.api('GET', '/account', { headers: cookieOf(session) }), 401, 'unauthorized');
    expect((await list(a.jwt)).body.tokens.map((x: any) => x.id)).to.not.include(id);
    // Signing out again, or with a dead token, is still a sign-out.
    expect((await t.api('DELETE', '/app/session', { headers: { ...cookieOf(session), 'x-gateway-app': '1' } })).status).to.equal(200);
    expect((await t.api('DELETE', '/app/session', { headers: { cookie: 'gw_session=garbage', 'x-gateway-app': '1' } })).status).to.equal(200);
  });

  it('drops the tokens a client-secret rotation ended', async () => {
    const a = await newAccount(t.api);
    await exchange(a);
    expect((await t.api('POST', '/account/client-secret/rotate', { token: a.jwt })).status).to.equal(200);
    const fresh = await login(a);
    const tokens = (await list(fresh)).body.tokens as any[];
    expect(tokens).to.have.length(1);
    expect(tokens[0].current).to.equal(true);
  });

  it("answers 404 for another account's token and unknown ids, changing nothing", async () => {
    const a = await newAccount(t.api);
    const b = await newAccount(t.api);
    const theirs = (await list(b.jwt)).body.tokens[0].id as string;
    expectError(await t.api('POST', `/account/tokens/${theirs}/revoke`, { token: a.jwt }), 404, 'not_found');
    expect((await list(b.jwt)).status).to.equal(200);
    expectError(await t.api('POST', `/account/tokens/at_${'0'.repeat(24)}/revoke`, { token: a.jwt }), 404, 'not_found');
  });

  it('refuses malformed ids with 400 and callers without a JWT with 401', async () => {
    const a = await newAccount(t.api);
    for (const id of ['x', 'at_SHORT', `at_${'A'.repeat(24)}`, `at_${'a'.repeat(25)}`, `${'a'.repeat(300)}`]) {
      expectError(await t.api('POST', `/account/tokens/${id}/revoke`, { token: a.jwt }), 400, 'invalid_input');
    }
    expectError(await t.api('GET', '/account/tokens'), 401, 'unauthorized');
    expectError(await t.api('POST', `/account/tokens/at_${'0'.repeat(24)}/revoke`), 401, 'unauthorized');
    const instance = await newInstance(t.api, a);
    const pair = { 'x-instance-token': instance.token, 'x-client-token': a.clientToken };
    expectError(await t.api('GET', '/account/tokens', { headers: pair }), 401, 'unauthorized');
  });

  it('documents both routes in the OpenAPI document', async () => {
    const doc = (await t.api('GET', '/openapi.json')).body;
    expect(doc.paths['/account/tokens']).to.have.property('get');
    expect(doc.paths['/account/tokens/{id}/revoke']).to.have.property('post');
  });
});
