import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { newAccount, startTestGateway, type TestGateway } from '../support/gateway.js';
import { DESKTOP, launchBrowser, screenshot } from './browser.js';

describe('web: /docs in chromium', function () {
  this.timeout(60_000);
  let t: TestGateway;
  let browser: Browser;
  before(async () => {
    t = await startTestGateway();
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await t.stop();
  });

  it('renders the document, loads nothing from another origin, and tries a request with a Bearer JWT', async () => {
    const account = await newAccount(t.api);
    const context = await browser.newContext(DESKTOP);
    const page = await context.newPage();
    const foreign: string[] = [];
    page.on('request', (req) => {
      if (!req.url().startsWith(t.gateway.url) && !req.url().startsWith('data:')) foreign.push(req.url());
    });
    await page.goto(`${t.gateway.url}/docs`);
    await page.getByRole('heading', { name: /Instance Messaging Gateway API/ }).waitFor();
    await page.getByRole('button', { name: 'Authorize' }).click();
    await page.locator('input[aria-label="auth-bearer-value"]').fill(account.jwt);
    await page.getByRole('button', { name: 'Apply credentials' }).or(page.locator('.auth-btn-wrapper button.authorize')).first().click();
    await page.getByRole('button', { name: 'Close' }).first().click();

    const operation = page.locator('#operations-Accounts-getAccount');
    await operation.locator('.opblock-summary').click();
    await operation.getByRole('button', { name: 'Execute' }).click();
    const body = operation.locator('.live-responses-table .response-col_description pre').first();
    await body.waitFor();
    expect(await body.textContent()).to.include(account.email);
    await screenshot(page, '00-docs');
    expect(foreign).to.deep.equal([]);
    await context.close();
  });
});
