import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { newAccount, newInstance, startTestGateway, type TestAccount, type TestGateway } from '../support/gateway.js';
import { instanceOf, newPhone, pairByQr, waitFor } from '../support/sandbox.js';
import {DESKTOP, openApp, screenshot, signIn } from './browser.js';

describe('web app: the instance list and an instance settings (in chromium)', function () {
  this.timeout(60_000);
  let t: TestGateway;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let account: TestAccount;
  let paired: { id: string; token: string };
  const names = (): Promise<string[]> => page.locator('.instances li a').allTextContents();

  before(async () => {
    t = await startTestGateway({ MESSAGING_NETWORK: 'sandbox' });
    account = await newAccount(t.api);
    for (let i = 1; i <= 21; i++) await newInstance(t.api, account, { name: `Branch ${String(i).padStart(2, '0')}` });
    paired = await newInstance(t.api, account, { name: 'Paired line' });
    await pairByQr(t.api, account, paired.id, (await newPhone(t.api, account)).phone);
    const canceled = await newInstance(t.api, account, { name: 'Old line' });
    expect((await t.api('DELETE', `/instances/${canceled.id}/cancel`, { token: account.jwt })).status).to.equal(200);

    ({ browser, context, page } = await openApp(DESKTOP));
    await signIn(page, t.gateway.url, account);
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await t.stop();
  });

  it('pages through 23 instances, newest first', async () => {
    await page.getByText('Page 1 of 2').waitFor();
    expect(await names()).to.have.length(20);
    expect((await names())[0]).to.equal('Old line');
    await screenshot(page, '12-instances');
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByText('Page 2 of 2').waitFor();
    expect(await names()).to.deep.equal(['Branch 03', 'Branch 02', 'Branch 01']);
  });

  it('searches and filters by connection and billing status', async () => {
    await page.getByLabel('Search by name, id or phone').fill('branch 1');
    const tens = ['Branch 19', 'Branch 18', 'Branch 17', 'Branch 16', 'Branch 15', 'Branch 14', 'Branch 13', 'Branch 12', 'Branch 11', 'Branch 10'];
    await waitFor(async () => (await names()).join() === tens.join(), 'the ten matches', 10_000);
    await page.getByLabel('Search by name, id or phone').fill('');
    await waitFor(async () => (await names()).length === 20, 'the whole first page again', 10_000);

    await page.getByLabel('Connection').selectOption('true');
    await waitFor(async () => (await names()).join() === 'Paired line', 'only the connected one', 10_000);
    await page.getByLabel('Connection').selectOption('');
    await waitFor(async () => (await names()).length === 20, 'the whole first page again', 10_000);

    await page.getByLabel('Billing').selectOption('CANCELED');
    await waitFor(async () => (await names()).join() === 'Old line', 'only the canceled one', 10_000);
    await page.getByLabel('Billing').selectOption('');
  });

  it('renames an instance, issues a new token (the old one stops), and cancels it after a confirmation', async () => {
    await page.goto(`${t.gateway.url}/app/instances/${paired.id}`);
    await page.getByLabel('Name', { exact: true }).fill('x');
    await page.getByRole('button', { name: 'Rename' }).click();
    await page.getByRole('alert').waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Main line');
    await page.getByRole('button', { name: 'Rename' }).click();
    await page.getByRole('heading', { name: 'Main line', level: 1 }).waitFor();
    expect((await instanceOf(t.api, account, paired.id)).name).to.equal('Main line');

    const byPair = (token: string) => t.api('GET', `/instances/${paired.id}`, { headers: { 'x-instance-token': token, 'x-client-token': account.clientToken } });
    expect((await byPair(paired.token)).status).to.equal(200);
    await page.getByRole('button', { name: 'New instance token' }).click();
    const token = (await page.locator('#instance-token').textContent())?.trim() ?? '';
    expect((await byPair(paired.token)).status).to.equal(403);
    expect((await byPair(token)).status).to.equal(200);

    await page.getByRole('button', { name: 'Cancel instance…' }).click();
    await page.getByRole('button', { name: 'Keep it' }).click();
    expect((await instanceOf(t.api, account, paired.id)).billing_status).to.equal('TRIALING');
    await page.getByRole('button', { name: 'Cancel instance…' }).click();
    await screenshot(page, '13-instance-settings');
    await page.getByRole('button', { name: 'Yes, cancel it' }).click();
    await page.getByText('Cancellation saved.').waitFor();
    expect((await instanceOf(t.api, account, paired.id)).billing_status).to.equal('CANCELED');
    expect(await page.getByText('Billing: canceled').count()).to.equal(1);
  });
});
