import { expect } from 'chai';
import { newInstance } from '../support/gateway.js';
import { newPhone, status } from '../support/sandbox.js';
import { screenshot, useSignedInApp } from './browser.js';

describe('web app: account credentials, pairing by code, logout (in chromium)', function () {
  this.timeout(60_000);
  const { t, owner: account, page } = useSignedInApp({ MESSAGING_NETWORK: 'sandbox' });

  it('shows the client token, and rotates the secret after a confirmation, showing the new one once', async () => {
    await page.getByRole('link', { name: account.email }).click();
    await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
    expect(await page.locator('#client-token').textContent()).to.equal(account.clientToken);
    await page.getByRole('button', { name: 'Rotate client secret' }).click();
    await page.getByRole('button', { name: 'Keep the current one' }).click();
    expect((await t.api('POST', '/token', { body: { client_token: account.clientToken, client_secret: account.clientSecret } })).status).to.equal(200);

    await page.getByRole('button', { name: 'Rotate client secret' }).click();
    await page.getByRole('button', { name: 'Yes, issue a new secret' }).click();
    const secret = (await page.locator('#client-secret').textContent())?.trim() ?? '';
    await screenshot(page, '10-account');
    expect((await t.api('POST', '/token', { body: { client_token: account.clientToken, client_secret: account.clientSecret } })).status).to.equal(401);
    expect((await t.api('POST', '/token', { body: { client_token: account.clientToken, client_secret: secret } })).status).to.equal(200);
    await page.reload();
    await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
    expect(await page.locator('#client-secret').count(), 'shown once').to.equal(0);
  });

  it('pairs by code typed on the phone, then logs the session out', async () => {
    // The rotation above ended the access tokens issued before it.
    account.jwt = (await t.api('POST', '/auth/login', { body: { email: account.email, password: account.password } })).body.access_token;
    const instance = await newInstance(t.api, account, { name: 'Paired by code' });
    const phone = await newPhone(t.api, account);
    await page.goto(`${t.gateway.url}/app/instances/${instance.id}`);
    await page.getByRole('button', { name: 'Pair a phone' }).click();
    await page.getByLabel(/link with a code/).fill(`+${phone.phone}`);
    await page.getByRole('button', { name: 'Get a code' }).click();
    const code = (await page.locator('#pair-code').textContent()) ?? '';
    expect(code).not.to.equal('');
    await screenshot(page, '11-pair-code');
    const link = await t.api('POST', `/sandbox/phones/${phone.phone}/link`, { token: account.jwt, body: { code } });
    expect(link.status, link.text).to.equal(200);
    await page.locator('#session-status', { hasText: /^connected$/ }).waitFor({ timeout: 10_000 });

    await page.getByRole('button', { name: 'Log out (unpair the phone)' }).click();
    await page.locator('#session-status', { hasText: /^not connected$/ }).waitFor({ timeout: 10_000 });
    expect((await status(t.api, account, instance.id)).connected).to.equal(false);
  });
});
