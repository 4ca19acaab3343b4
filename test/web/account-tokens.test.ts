import { expect } from 'chai';

import { screenshot, useSignedInApp } from './browser.js';

describe('web app: active access tokens in the account area (in chromium)', function () {
  this.timeout(60_000);
  const { t, owner: account, page, context } = useSignedInApp();

  it('lists the tokens with this session marked, revokes another one, then revokes this one and signs out', async () => {
    const server = (await t.api('POST', '/token', { body: { client_token: account.clientToken, client_secret: account.clientSecret }, headers: { 'user-agent': 'billing-server/2.1' } })).body
      .access_token as string;
    await page.getByRole('link', { name: account.email }).click();
    await page.getByRole('heading', { name: 'Active access tokens', level: 2 }).waitFor();

    const items = page.locator('#access-tokens li');
    await items.first().waitFor();
    // newAccount's API sign-in, the browser's, and the server's.
    expect(await items.count()).to.equal(3);
    const mine = items.filter({ hasText: 'This session' });
    expect(await mine.count()).to.equal(1);
    expect(await mine.textContent()).to.include('Web app sign-in');
    const theirs = items.filter({ hasText: 'billing-server/2.1' });
    expect(await theirs.textContent()).to.include('Client credentials (POST /token)');
    await screenshot(page, '12-account-tokens');

    expect((await t.api('GET', '/account', { token: server })).status).to.equal(200);
    await theirs.getByRole('button', { name: /^Revoke the token issued/ }).click();
    await page.getByText('Token revoked: it no longer opens the account.').waitFor();
    // The list is read again after the notice shows: on the slower adapters it can still be on its way.
    await items.filter({ hasText: 'billing-server/2.1' }).waitFor({ state: 'detached', timeout: 5000 });
    expect(await items.filter({ hasText: 'billing-server/2.1' }).count()).to.equal(0);
    expect((await t.api('GET', '/account', { token: server })).status, 'the revoked token is refused at once').to.equal(401);
    expect((await t.api('GET', '/account', { token: account.jwt })).status, 'the others keep working').to.equal(200);

    // The cookie as it was before the revoke: a copy kept elsewhere must open nothing afterwards.
    const cookie = (await context.cookies()).find((c) => c.name === 'gw_session');
    expect(cookie?.value, 'the signed-in browser holds its session cookie').to.be.a('string');
    expect((await t.api('GET', '/account', { headers: { cookie: `gw_session=${cookie?.value}` } })).status).to.equal(200);
    await mine.getByRole('button', { name: 'Revoke and sign out (this session)' }).click();
    await page.getByLabel('E-mail').waitFor();
    expect((await t.api('GET', '/account', { headers: { cookie: `gw_session=${cookie?.value}` } })).status, 'the revoked cookie is refused').to.equal(401);
    await page.goto(`${t.gateway.url}/app/account`);
    await page.getByLabel('E-mail').waitFor();
    expect(await page.getByRole('heading', { name: 'Active access tokens' }).count()).to.equal(0);
  });
});
