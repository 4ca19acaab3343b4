import { expect } from 'chai';
import { expectError, newAccount, startTestGateway, type TestGateway } from '../support/gateway.js';

describe('accounts and tokens over HTTP', () => {
  let t: TestGateway;
  before(async () => (t = await startTestGateway()));
  after(async () => t.stop());

  describe('POST /auth/signup', () => {
    it('creates an account and shows the secret once', async () => {
      const res = await t.api('POST', '/auth/signup', { body: { email: 'Ada@Example.com', password: 'long enough' } });
      expect(res.status).to.equal(201);
      expect(Object.keys(res.body)).to.deep.equal(['account_id', 'email', 'client_token', 'client_secret']);
      expect(res.body.email).to.equal('ada@example.com');
      const me = await t.api('POST', '/token', { body: { client_token: res.body.client_token, client_secret: res.body.client_secret } });
      const account = await t.api('GET', '/account', { token: me.body.access_token });
      expect(account.body).to.not.have.property('client_secret');
      expect(JSON.stringify(account.body)).to.not.include(res.body.client_secret);
    });

    it('refuses a taken e-mail, whatever its case, with 409', async () => {
      await t.api('POST', '/auth/signup', { body: { email: 'dup@example.com', password: 'long enough' } });
      expectError(await t.api('POST', '/auth/signup', { body: { email: 'DUP@example.com', password: 'long enough' } }), 409, 'conflict');
    });

    it('refuses bad input with 400 naming the field', async () => {
      const cases: [unknown, string][] = [
        [{ email: 'not-an-email', password: 'long enough' }, 'email'],
        [{ email: 'a@example.com', password: 'short' }, 'password'],
        [{ email: 'a@example.com', password: 'x'.repeat(257) }, 'password'],
        [{ email: 'a@example.com' }, 'password'],
        [{ email: 42, password: 'long enough' }, 'email'],
        [{ email: 'a@example.com', password: 'long enough', admin: true }, 'admin'],
      ];
      for (const [body, field] of cases) {
        const res = await t.api('POST', '/auth/signup', { body });
        expectError(res, 400, 'invalid_input');
        expect(res.body.error.details.map((d: { field: string }) => d.field), JSON.stringify(body)).to.include(field);
      }
    });

    it('numbers accounts in sign-up order', async () => {
      const a = await newAccount(t.api);
      const b = await newAccount(t.api);
      const ua = (await t.api('GET', '/account', { token: a.jwt })).body.user_id;
      const ub = (await t.api('GET', '/account', { token: b.jwt })).body.user_id;
      expect(ub).to.equal(ua + 1);
    });

    it('gives distinct numbers to concurrent sign-ups', async () => {
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) => t.api('POST', '/auth/signup', { body: { email: `c${i}@conc.io`, password: 'long enough' } })),
      );
      expect(results.map((r) => r.status)).to.deep.equal(Array(8).fill(201));
      const ids = await Promise.all(
        results.map(async (r) => {
          const jwt = (await t.api('POST', '/token', { body: { client_token: r.body.client_token, client_secret: r.body.client_secret } })).body.access_token;
          return (await t.api('GET', '/account', { token: jwt })).body.user_id as number;
        }),
      );
      expect(new Set(ids).size).to.equal(8);
    });
  });

  describe('POST /auth/login and POST /token', () => {
    it('issues a Bearer JWT with expires_in in seconds', async () => {
      const a = await newAccount(t.api);
      const login = await t.api('POST', '/auth/login', { body: { email: a.email, password: a.password } });
      expect(login.status).to.equal(200);
      expect(Object.keys(login.body)).to.deep.equal(['access_token', 'token_type', 'expires_in']);
      expect(login.body.token_type).to.equal('Bearer');
      expect(login.body.expires_in).to.equal(3600);
      const token = await t.api('POST', '/token', { body: { client_token: a.clientToken, client_secret: a.clientSecret } });
      expect(token.status).to.equal(200);
      expect((await t.api('GET', '/account', { token: token.body.access_token })).body.account_id).to.equal(a.accountId);
    });

    it('answers 401 to a wrong pair', async () => {
      const a = await newAccount(t.api);
      expectError(await t.api('POST', '/auth/login', { body: { email: a.email, password: 'wrong password' } }), 401, 'unauthorized');
      expectError(await t.api('POST', '/auth/login', { body: { email: 'nobody@example.com', password: 'whatever1' } }), 401, 'unauthorized');
      expectError(await t.api('POST', '/token', { body: { client_token: a.clientToken, client_secret: 'cs_wrong' } }), 401, 'unauthorized');
      expectError(await t.api('POST', '/token', { body: { client_token: 'ct_unknown', client_secret: a.clientSecret } }), 401, 'unauthorized');
    });

    it('refuses bad input with 400', async () => {
      expectError(await t.api('POST', '/token', { body: { client_token: 'x' } }), 400, 'invalid_input');
      expectError(await t.api('POST', '/auth/login', { body: [] }), 400, 'invalid_input');
    });
  });

  describe('GET /account', () => {
    it('answers the account without secrets', async () => {
      const a = await newAccount(t.api);
      const res = await t.api('GET', '/account', { token: a.jwt });
      expect(res.status).to.equal(200);
      expect(Object.keys(res.body)).to.deep.equal(['account_id', 'user_id', 'email', 'client_token', 'created_at']);
      expect(res.body.user_id).to.be.a('number');
    });

    it('answers 401 without or with a bad token', async () => {
      expectError(await t.api('GET', '/account'), 401, 'unauthorized');
      expectError(await t.api('GET', '/account', { token: 'not.a.jwt' }), 401, 'unauthorized');
      expectError(await t.api('GET', '/account', { headers: { authorization: 'Basic abc' } }), 401, 'unauthorized');
    });
  });

  describe('POST /account/client-secret/rotate', () => {
    it('kills the old secret at once', async () => {
      const a = await newAccount(t.api);
      const res = await t.api('POST', '/account/client-secret/rotate', { token: a.jwt });
      expect(res.status).to.equal(200);
      expect(res.body.client_token).to.equal(a.clientToken);
      expect(res.body.client_secret).to.not.equal(a.clientSecret);
      expectError(await t.api('POST', '/token', { body: { client_token: a.clientToken, client_secret: a.clientSecret } }), 401, 'unauthorized');
      expect((await t.api('POST', '/token', { body: { client_token: a.clientToken, client_secret: res.body.client_secret } })).status).to.equal(200);
    });

    it('requires a JWT', async () => {
      expectError(await t.api('POST', '/account/client-secret/rotate'), 401, 'unauthorized');
    });
  });

  describe('throttling failed attempts', () => {
    it('slows and then refuses repeated failures with 429 and Retry-After', async function () {
      this.timeout(30_000);
      const a = await newAccount(t.api);
      const statuses: number[] = [];
      let last;
      for (let i = 0; i < 12; i++) {
        last = await t.api('POST', '/token', { body: { client_token: a.clientToken, client_secret: 'cs_wrong' }, headers: {} });
        statuses.push(last.status);
      }
      expect(statuses.slice(0, 10)).to.deep.equal(Array(10).fill(401));
      expectError(last!, 429, 'rate_limited');
      expect(Number(last!.headers.get('retry-after'))).to.be.greaterThan(0);
      // The right secret is refused too while the block lasts: the limit is per account.
      expectError(await t.api('POST', '/token', { body: { client_token: a.clientToken, client_secret: a.clientSecret } }), 429, 'rate_limited');
    });
  });
});

describe('closed sign-up', () => {
  it('refuses sign-ups with 403 when SIGNUP=closed', async () => {
    const t = await startTestGateway({ SIGNUP: 'closed' });
    try {
      expectError(await t.api('POST', '/auth/signup', { body: { email: 'x@example.com', password: 'long enough' } }), 403, 'forbidden');
    } finally {
      await t.stop();
    }
  });
});
