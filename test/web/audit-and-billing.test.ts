import { expect } from 'chai';
import { newInstance } from '../support/gateway.js';
import { instanceOf, newPhone, pairByQr, waitFor } from '../support/sandbox.js';
import { screenshot, useSignedInApp } from './browser.js';

describe('web app: statistics, history and billing of an instance (in chromium)', function () {
  this.timeout(60_000);
  const { t, owner: account, page } = useSignedInApp({ MESSAGING_NETWORK: 'sandbox', BILLING_PERIOD_DAYS: '30' });
  let id: string;

  before(async () => {
    ({ id } = await newInstance(t.api, account, { name: 'Audited line' }));
    const me = await newPhone(t.api, account);
    const them = await newPhone(t.api, account);
    await pairByQr(t.api, account, id, me.phone);
    await t.api('POST', `/sandbox/phones/${them.phone}/messages`, { token: account.jwt, body: { to: me.phone, text: 'counted' } });
    await waitFor(async () => {
      const stats = await t.api('GET', `/instances/${id}/stats?bucket=day`, { token: account.jwt });
      return stats.body.buckets?.some((b: { messages_in: number }) => b.messages_in === 1);
    }, 'the message in the statistics');

    await page.goto(`${t.gateway.url}/app/instances/${id}`);
    await page.getByRole('heading', { name: 'Audited line', level: 1 }).waitFor();
  });

  it('charts the messages of the week and lists them by day', async () => {
    await page.getByRole('img', { name: 'Messages in and out per day' }).waitFor();
    // The second column is the messages in: one day of the week has the one sent.
    const incoming = await page.locator('table.stats tbody tr td:nth-of-type(1)').allTextContents();
    expect(incoming).to.include('1');
  });

  it('shows the history as a timeline with who did what, and the instance at a chosen moment', async () => {
    await page.locator('.timeline li', { hasText: 'InstanceCreated' }).waitFor();
    expect(await page.locator('.timeline li', { hasText: 'InstanceCreated' }).textContent()).to.include(`account ${account.accountId}`);
    expect(await page.locator('.timeline li', { hasText: 'SessionConnected' }).count()).to.be.greaterThan(0);
    const created = new Date((await instanceOf(t.api, account, id)).created_at);
    const later = new Date(created.getTime() + 1000);
    const local = new Date(later.getTime() - later.getTimezoneOffset() * 60_000).toISOString().slice(0, 19);
    await page.getByLabel('Date and time').fill(local);
    await page.getByRole('button', { name: 'Show', exact: true }).click();
    await page.locator('#state-at-moment').waitFor();
    expect(await page.locator('#state-at-moment').textContent()).to.include('Audited line');
    await screenshot(page, '16-stats-history');
  });

  it('subscribes, schedules a cancellation and resumes, from the page', async () => {
    await page.getByRole('button', { name: 'Subscribe' }).click();
    await page.getByText('Billing: active').waitFor();
    expect((await instanceOf(t.api, account, id)).billing_status).to.equal('ACTIVE');
    await page.getByRole('button', { name: 'Cancel instance…' }).click();
    await page.getByRole('button', { name: 'Yes, cancel it' }).click();
    await page.getByRole('button', { name: 'Resume subscription' }).waitFor();
    expect((await instanceOf(t.api, account, id)).cancel_at).to.be.a('string');
    await page.getByRole('button', { name: 'Resume subscription' }).click();
    await page.getByText('The subscription goes on.').waitFor();
    expect((await instanceOf(t.api, account, id)).cancel_at).to.equal(null);
    await screenshot(page, '17-billing');
  });
});
