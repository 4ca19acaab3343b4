import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { newAccount, startTestGateway, type TestGateway } from '../support/gateway.js';
import { DESKTOP, launchBrowser, screenshot } from './browser.js';

describe('web app: sign-up and sign-in (in chromium)', function () {
  this.timeout(60_000);
  let t: TestGateway;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  before(async () => {
    t = await startTestGateway();
    browser = await launchBrowser();
  });
  beforeEach(async () => {
    context = await browser.newContext(DESKTOP);
    page = await context.newPage();
  });
  afterEach(async () => context.close());
  after(async () => {
    await browser?.close();
    await t.stop();
  });

  it('shows the sign-in form to a visitor, and a wrong password as an error', async () => {
    const account = await newAccount(t.api);
    await page.goto(`${t.gateway.url}/app`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await screenshot(page, '01-sign-in');
    await page.getByLabel('E-mail').fill(account.email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByLabel('Password').press('Enter');
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).to.include('wrong e-mail or password');
    await screenshot(page, '02-sign-in-error');
    expect((await context.cookies()).map((c) => c.name)).not.to.include('gw_session');
  });

  it('signs in with the right pair: an http-only strict cookie, nothing in storage', async () => {
    const account = await newAccount(t.api);
    await page.goto(`${t.gateway.url}/app/sign-in`);
    await page.getByLabel('E-mail').fill(account.email);
    await page.getByLabel('Password').fill(account.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Instances', level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).to.equal('/app/instances');
    const [cookie] = (await context.cookies()).filter((c) => c.name === 'gw_session');
    expect(cookie).to.include({ httpOnly: true, sameSite: 'Strict' });
    expect(await page.evaluate('document.cookie')).to.equal('');
    expect(await page.evaluate('localStorage.length + sessionStorage.length')).to.equal(0);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect((await context.cookies()).map((c) => c.name)).not.to.include('gw_session');
  });

  it('shows sign-up errors (short password, e-mail taken), then creates the account and shows its secret once', async () => {
    const taken = await newAccount(t.api);
    await page.goto(`${t.gateway.url}/app/sign-up`);
    await page.getByRole('heading', { name: 'Create an account' }).waitFor();
    const email = `web-${Date.now()}@example.com`;
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill('short');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).to.match(/password/i);
    await screenshot(page, '03-sign-up-error');

    await page.getByLabel('E-mail').fill(taken.email);
    await page.getByLabel('Password').fill('long enough password');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('alert').filter({ hasText: /taken|exists|registered/i }).waitFor();

    await page.getByLabel('E-mail').fill(email);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Account created' }).waitFor();
    const shown = await page.locator('.secrets code').allTextContents();
    expect(shown).to.have.length(2);
    // The secret shown is the real one: it buys a token.
    const token = await t.api('POST', '/token', { body: { client_token: shown[0], client_secret: shown[1] } });
    expect(token.status).to.equal(200);
    await screenshot(page, '04-account-created');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('heading', { name: 'Instances', level: 1 }).waitFor();
    expect(await page.locator('.who').textContent()).to.equal(email);
  });
});
