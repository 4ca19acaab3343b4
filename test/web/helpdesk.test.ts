import { expect } from 'chai';
import { newInstance } from '../support/gateway.js';
import { ChatwootTestServer } from '../servers/chatwoot/chatwoot-test-server.js';
import { screenshot, useSignedInApp } from './browser.js';

describe('web app: the helpdesk settings (in chromium, against the Chatwoot test server)', function () {
  this.timeout(60_000);
  const { t, owner: account, page } = useSignedInApp({ MESSAGING_NETWORK: 'sandbox' });
  let chatwoot: ChatwootTestServer;
  let id: string;

  before(async () => {
    chatwoot = await new ChatwootTestServer().start();
    ({ id } = await newInstance(t.api, account, { name: 'Support desk' }));
    await page.goto(`${t.gateway.url}/app/instances/${id}`);
    await page.getByRole('heading', { name: 'Helpdesk (Chatwoot)' }).waitFor();
  });
  after(async () => {
    await chatwoot.close();
  });

  it('saves the helpdesk: the inbox is created with the callback the page shows, the token only masked; then removes it', async () => {
    await page.getByLabel('Helpdesk address').fill(chatwoot.url);
    await page.getByLabel('Account id in the helpdesk').fill(String(chatwoot.accountId));
    await page.getByLabel('Inbox name').fill('WhatsApp support');
    await page.getByLabel(/^Access token/).fill(chatwoot.token);
    await page.getByRole('button', { name: 'Save helpdesk' }).click();
    await page.locator('#helpdesk-current').waitFor();
    const inbox = chatwoot.inboxes.find((i) => i.name === 'WhatsApp support');
    expect(inbox, 'inbox created').to.exist;
    expect(await page.locator('#helpdesk-current code').textContent()).to.equal(inbox?.webhook_url);
    expect(await page.content()).not.to.include(chatwoot.token);
    expect(await page.getByLabel(/^Access token/).getAttribute('type')).to.equal('password');
    await screenshot(page, '18-helpdesk');

    await page.getByRole('button', { name: 'Remove helpdesk' }).click();
    await page.getByText('Helpdesk removed.').waitFor();
    expect((await t.api('GET', `/instances/${id}/helpdesk`, { token: account.jwt })).status).to.equal(404);
  });

  it('shows the helpdesk’s refusal of a wrong token, and saves nothing', async () => {
    await page.getByLabel('Helpdesk address').fill(chatwoot.url);
    await page.getByLabel('Account id in the helpdesk').fill(String(chatwoot.accountId));
    await page.getByLabel(/^Access token/).fill('not-the-token-at-all');
    await page.getByRole('button', { name: 'Save helpdesk' }).click();
    await page.getByRole('alert').filter({ hasText: /token/ }).waitFor();
    expect((await t.api('GET', `/instances/${id}/helpdesk`, { token: account.jwt })).status).to.equal(404);
  });
});
