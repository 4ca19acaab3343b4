import { expect } from 'chai';
import { expectError, newAccount, startTestGateway, type Answer, type TestAccount, type TestGateway } from '../support/gateway.js';

const checked = (answers: Answer[]) => answers.filter((a) => a.status === 200 || a.status === 401).length;

describe('security: sign-in limits (finding a)', () => {
  describe('from one address', () => {
    let t: TestGateway;
    // The production hashing cost: with a cheap hash the guesses finish one by one and never overlap.
    before(async () => (t = await startTestGateway({ SCRYPT_LOG_N: '15' })));
    after(async () => t.stop());

    it('thirty guesses sent together: at most ten are checked, the right one among them is not let through', async () => {
      const victim = await newAccount(t.api);
      const guesses = Array.from({ length: 30 }, (_, i) => (i === 29 ? victim.password : `wrong guess ${i}`));
      const answers = await Promise.all(guesses.map((password) => t.api('POST', '/auth/login', { body: { email: victim.email, password } })));
      expect(checked(answers)).to.be.at.most(10);
      const refused = answers.filter((a) => a.status === 429);
      expect(refused.length).to.be.at.least(20);
      for (const a of refused) {
        expectError(a, 429, 'rate_limited');
        expect(Number(a.headers.get('retry-after'))).to.be.at.least(1);
      }
      // Ten failures in: the pair is refused now, right password or not.
      expectError(await t.api('POST', '/auth/login', { body: { email: victim.email, password: victim.password } }), 429, 'rate_limited');
    });

    it('the same holds for client-secret guesses on POST /token', async () => {
      const victim = await newAccount(t.api);
      const answers = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          t.api('POST', '/token', { body: { client_token: victim.clientToken, client_secret: i === 29 ? victim.clientSecret : `cs_wrong${i}` } }),
        ),
      );
      expect(checked(answers)).to.be.at.most(10);
    });

    it('X-Forwarded-For is ignored unless TRUST_PROXY is set: changing it does not escape the limit', async () => {
      const victim = await newAccount(t.api);
      const tries = Array.from({ length: 10 }, (_, i) =>
        t.api('POST', '/auth/login', { body: { email: victim.email, password: 'nope nope' }, headers: { 'x-forwarded-for': `203.0.113.${i}` } }),
      );
      for (const res of await Promise.all(tries)) expect(res.status).to.equal(401);
      const next = await t.api('POST', '/auth/login', { body: { email: victim.email, password: victim.password }, headers: { 'x-forwarded-for': '203.0.113.99' } });
      expectError(next, 429, 'rate_limited');
    });
  });

  describe('behind a reverse proxy (TRUST_PROXY=true)', () => {
    let t: TestGateway;
    let victim: TestAccount;
    const login = (address: string, password: string) =>
      t.api('POST', '/auth/login', { body: { email: victim.email, password }, headers: { 'x-forwarded-for': address } });
    before(async () => {
      t = await startTestGateway({ TRUST_PROXY: 'true' });
      victim = await newAccount(t.api);
    });
    after(async () => t.stop());

    it('a guesser slows and stops only itself: the owner still signs in from elsewhere', async () => {
      const answers = await Promise.all(Array.from({ length: 30 }, () => login('198.51.100.7', 'guessing')));
      expect(checked(answers)).to.be.at.most(10);
      expectError(await login('198.51.100.7', victim.password), 429, 'rate_limited');
      const owner = await login('192.0.2.44', victim.password);
      expect(owner.status, owner.text).to.equal(200);
    });

    it('the address is the one the proxy appended, not one the client wrote before it', async () => {
      const other = await newAccount(t.api);
      const tries = Array.from({ length: 10 }, (_, i) =>
        t.api('POST', '/auth/login', { body: { email: other.email, password: 'nope nope' }, headers: { 'x-forwarded-for': `10.9.9.${i}, 198.51.100.8` } }),
      );
      for (const res of await Promise.all(tries)) expect(res.status).to.equal(401);
      const res = await t.api('POST', '/auth/login', { body: { email: other.email, password: other.password }, headers: { 'x-forwarded-for': '10.9.9.200, 198.51.100.8' } });
      expectError(res, 429, 'rate_limited');
    });

    it('guesses spread over many addresses meet the per-account ceiling', async () => {
      const target = await newAccount(t.api);
      const answers = await Promise.all(
        Array.from({ length: 130 }, (_, i) =>
          t.api('POST', '/auth/login', { body: { email: target.email, password: 'spread out' }, headers: { 'x-forwarded-for': `100.${Math.floor(i / 250)}.${i % 250}.1` } }),
        ),
      );
      expect(checked(answers)).to.be.at.most(100);
      expect(answers.filter((a) => a.status === 429).length).to.be.at.least(30);
    });
  });
});
