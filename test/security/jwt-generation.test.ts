import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectError, newAccount, newInstance, startTestGateway, type TestGateway } from '../support/gateway.js';

describe('security: JWTs die with the client secret they were issued under (finding g)', () => {
  let t: TestGateway;
  before(async () => (t = await startTestGateway()));
  after(async () => t.stop());

  const tokenFor = async (clientToken: string, clientSecret: string) => {
    const res = await t.api('POST', '/token', { body: { client_token: clientToken, client_secret: clientSecret } });
    expect(res.status, res.text).to.equal(200);
    return res.body.access_token as string;
  };

  it('every JWT issued before a rotation answers 401 at once; new ones work', async () => {
    const a = await newAccount(t.api);
    const instance = await newInstance(t.api, a);
    const fromSecret = await tokenFor(a.clientToken, a.clientSecret);
    expect((await t.api('GET', '/account', { token: fromSecret })).status).to.equal(200);
    expect((await t.api('GET', `/instances/${instance.id}`, { token: a.jwt })).status).to.equal(200);

    const rotated = await t.api('POST', '/account/client-secret/rotate', { token: a.jwt });
    expect(rotated.status).to.equal(200);
    for (const old of [a.jwt, fromSecret]) {
      expectError(await t.api('GET', '/account', { token: old }), 401, 'unauthorized');
      expectError(await t.api('GET', `/instances/${instance.id}`, { token: old }), 401, 'unauthorized');
    }
    const fresh = await tokenFor(a.clientToken, rotated.body.client_secret as string);
    expect((await t.api('GET', `/instances/${instance.id}`, { token: fresh })).status).to.equal(200);
    const login = await t.api('POST', '/auth/login', { body: { email: a.email, password: a.password } });
    expect((await t.api('GET', '/account', { token: login.body.access_token })).status).to.equal(200);

    // A second rotation kills the tokens of the first.
    const again = await t.api('POST', '/account/client-secret/rotate', { token: fresh });
    expect(again.status).to.equal(200);
    expectError(await t.api('GET', '/account', { token: fresh }), 401, 'unauthorized');
    expectError(await t.api('GET', '/account', { token: login.body.access_token }), 401, 'unauthorized');
  });

  it("one account's rotation leaves another's tokens alone", async () => {
    const a = await newAccount(t.api);
    const b = await newAccount(t.api);
    await t.api('POST', '/account/client-secret/rotate', { token: a.jwt });
    expect((await t.api('GET', '/account', { token: b.jwt })).status).to.equal(200);
  });

  it('the token pair is not a JWT and is not affected', async () => {
    const a = await newAccount(t.api);
    const instance = await newInstance(t.api, a);
    await t.api('POST', '/account/client-secret/rotate', { token: a.jwt });
    const status = await t.api('GET', `/instances/${instance.id}/session/status`, { headers: { 'x-instance-token': instance.token, 'x-client-token': a.clientToken } });
    expect(status.status).to.equal(200);
  });
});

describe('security: a revoked JWT stays revoked after a restart', () => {
  it('is refused by a gateway that never saw it before', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gw-jwt-'));
    try {
      let t = await startTestGateway({}, {}, dir);
      const a = await newAccount(t.api);
      const before = a.jwt;
      const rotated = await t.api('POST', '/account/client-secret/rotate', { token: a.jwt });
      const after = (await t.api('POST', '/token', { body: { client_token: a.clientToken, client_secret: rotated.body.client_secret } })).body.access_token as string;
      await t.stop();
      t = await startTestGateway({}, {}, dir);
      try {
        expectError(await t.api('GET', '/account', { token: before }), 401, 'unauthorized');
        expect((await t.api('GET', '/account', { token: after })).status).to.equal(200);
      } finally {
        await t.stop();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
