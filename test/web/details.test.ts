import { expect } from 'chai';

import { instanceOf, newPhone, pairByQr } from '../support/sandbox.js';
import { screenshot, useSignedInApp } from './browser.js';

describe('web app: the token at creation, switches, the signing secret and the profile (in chromium)', function () {
  this.timeout(60_000);
  const { t, owner: account, page } = useSignedInApp({ MESSAGING_NETWORK: 'sandbox' });
  let id = '';

  it('shows the instance token once, right after creating the instance, and never again', async () => {
    await page.getByLabel('Name', { exact: true }).fill('Token shown once');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.locator('#created-token').waitFor();
    const token = (await page.locator('#created-token').textContent())?.trim() ?? '';
    id = new URL(page.url()).pathname.split('/').pop() as string;
    const pair = await t.api('GET', `/instances/${id}/session/status`, { headers: { 'x-instance-token': token, 'x-client-token': account.clientToken } });
    expect(pair.status, 'the token shown works').to.equal(200);
    await page.reload();
    await page.getByRole('heading', { name: 'Token shown once', level: 1 }).waitFor();
    expect(await page.locator('#created-token').count()).to.equal(0);
  });

  it('switches call rejection and auto-read, and issues a new signing secret', async () => {
    await page.getByLabel('Reject incoming calls').check();
    await page.getByText('Calls are rejected.').waitFor();
    expect((await instanceOf(t.api, account, id)).reject_calls).to.equal(true);
    await page.getByLabel(/Mark incoming/).check();
    await page.getByText('Messages are marked read on arrival.').waitFor();
    expect((await instanceOf(t.api, account, id)).auto_read_messages).to.equal(true);

    await page.getByRole('button', { name: 'Show signing secret' }).click();
    const before = (await page.locator('#webhook-secret').textContent()) ?? '';
    await page.getByRole('button', { name: 'New signing secret' }).click();
    await page.getByText(/New signing secret: deliveries/).waitFor();
    const after = (await page.locator('#webhook-secret').textContent()) ?? '';
    expect(after).to.match(/^whsec_/).and.not.equal(before);
    expect((await t.api('GET', `/instances/${id}/webhook`, { token: account.jwt })).body.data.secret).to.equal(after);
  });

  it("shows the connected account's profile", async () => {
    const phone = await newPhone(t.api, account, { about: 'Open 9 to 5' });
    await pairByQr(t.api, account, id, phone.phone);
    await page.locator('#profile').waitFor({ timeout: 10_000 });
    expect(await page.locator('#profile').textContent()).to.include('Open 9 to 5');
    await screenshot(page, '19-profile-switches');
  });
});
