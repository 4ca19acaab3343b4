import { expect } from 'chai';
import { expectError, newAccount, startTestGateway, type TestAccount, type TestGateway } from '../support/gateway.js';

describe('web: the session cookie', function () {
  this.timeout(20_000);
  let t: TestGateway;
  let account: TestAccount;
  let cookie: string;
  before(async () => {
    t = await startTestGateway();
    account = await newAccount(t.api);
  });
  after(async () => t.stop());

  it('POST /app/session sets an http-only, SameSite=Strict cookie and answers no token', async () => {
    const res = await t.api('POST', '/app/session', { body: { email: account.email, password: account.password } });
    expect(res.status).to.equal(200);
    expect(res.body).to.have.keys('expires_in');
    const setCookie = res.headers.get('set-cookie') ?? '';
    expect(setCookie).to.match(/^gw_session=[^;]+; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Strict$/);
    cookie = setCookie.split(';')[0] as string;
  });

  it('wrong e-mail or password: 401 and no cookie', async () => {
    const res = await t.api('POST', '/app/session', { body: { email: account.email, password: 'not the password' } });
    expectError(res, 401, 'unauthorized');
    expect(res.headers.get('set-cookie')).to.equal(null);
  });

  it('the cookie authenticates reads as the Bearer JWT would', async () => {
    const res = await t.api('GET', '/account', { headers: { cookie } });
    expect(res.status).to.equal(200);
    expect(res.body.email).to.equal(account.email);
  });

  it('a cookie-carried write without the app header is refused and changes nothing', async () => {
    const res = await t.api('PUT', '/instances/create', { headers: { cookie }, body: { name: 'forged' } });
    expectError(res, 401, 'unauthorized');
    const list = await t.api('POST', '/instances/list', { token: account.jwt, body: {} });
    expect(list.body.total).to.equal(0);
  });

  it('a cookie-carried write with the app header is accepted', async () => {
    const res = await t.api('PUT', '/instances/create', { headers: { cookie, 'x-gateway-app': '1' }, body: { name: 'from the app' } });
    expect(res.status).to.equal(200);
    expect(res.body.name).to.equal('from the app');
  });

  it('a forged or stale cookie is 401', async () => {
    expectError(await t.api('GET', '/account', { headers: { cookie: 'gw_session=not.a.jwt' } }), 401, 'unauthorized');
  });

  it('DELETE /app/session clears the cookie', async () => {
    const res = await t.api('DELETE', '/app/session', { headers: { cookie } });
    expect(res.status).to.equal(200);
    expect(res.headers.get('set-cookie')).to.match(/^gw_session=; Path=\/; Max-Age=0; HttpOnly; SameSite=Strict/);
  });
});

describe('web: the session cookie behind https', function () {
  this.timeout(20_000);
  let t: TestGateway;
  before(async () => {
    t = await startTestGateway({ PUBLIC_URL: 'https://gateway.example.com' });
  });
  after(async () => t.stop());

  it('is marked Secure when the public address is https', async () => {
    const account = await newAccount(t.api);
    const res = await t.api('POST', '/app/session', { body: { email: account.email, password: account.password } });
    expect(res.status).to.equal(200);
    expect(res.headers.get('set-cookie')).to.match(/; HttpOnly; SameSite=Strict; Secure$/);
  });
});
