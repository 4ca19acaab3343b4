import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { newAccount, startTestGateway, type TestAccount, type TestGateway } from '../support/gateway.js';
import { newPhone, waitFor } from '../support/sandbox.js';
import { Receiver, verifies } from '../webhooks/support/receiver.js';
import {openApp, PHONE, screenshot } from './browser.js';

/**
 * The newcomer's path on the sandbox, all in the browser but the phone: sign in, create an
 * instance, pair it by the QR the page shows, point its webhook at a receiver, see a message
 * arrive there. On a phone-sized screen, since that is where the app is hardest to use.
 */
describe('web app: pairing and webhook on the sandbox (in chromium)', function () {
  this.timeout(60_000);
  let t: TestGateway;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let account: TestAccount;
  let receiver: Receiver;
  let instanceId: string;
  let paired: { phone: string };

  before(async () => {
    t = await startTestGateway({ MESSAGING_NETWORK: 'sandbox' });
    receiver = await new Receiver().start();
    ({ browser, context, page } = await openApp(PHONE));
    account = await newAccount(t.api);
    await page.goto(`${t.gateway.url}/app`);
    await page.getByLabel('E-mail').fill(account.email);
    await page.getByLabel('Password').fill(account.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Instances', level: 1 }).waitFor();
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await receiver.stop();
    await t.stop();
  });

  it('creates an instance from the list, which opens its page', async () => {
    await page.getByLabel('Name', { exact: true }).fill('ab');
    await page.getByRole('button', { name: 'Create instance' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).to.match(/name/i);

    await page.getByLabel('Name', { exact: true }).fill('Shop front desk');
    await page.getByRole('button', { name: 'Create instance' }).click();
    await page.getByRole('heading', { name: 'Shop front desk', level: 1 }).waitFor();
    instanceId = (/\/app\/instances\/(\w+)$/.exec(page.url()) ?? [])[1] as string;
    const stored = await t.api('GET', `/instances/${instanceId}`, { token: account.jwt });
    expect(stored.status).to.equal(200);
    expect(stored.body.name).to.equal('Shop front desk');
    // The status loads after the page: on the slower adapters it can still say 'loading' here.
    await page.waitForFunction("document.querySelector('#session-status')?.textContent !== 'loading'");
    expect(await page.locator('#session-status').textContent()).to.equal('not connected');
  });

  it('lists it, and its url opens the same page', async () => {
    const instance = await t.api('GET', `/instances/${instanceId}`, { token: account.jwt });
    await page.goto(instance.body.url);
    await page.getByRole('heading', { name: 'Shop front desk', level: 1 }).waitFor();
    await page.getByRole('link', { name: 'All instances' }).click();
    await page.getByRole('link', { name: 'Shop front desk' }).waitFor();
    await screenshot(page, '05-instances-phone');
    await page.getByRole('link', { name: 'Shop front desk' }).click();
    await page.getByRole('heading', { name: 'Shop front desk', level: 1 }).waitFor();
  });

  it('shows the QR, and turns connected without a reload when the phone scans it', async () => {
    paired = await newPhone(t.api, account, { push_name: 'Front desk phone' });
    await page.getByRole('button', { name: 'Pair a phone' }).click();
    const qrImage = page.getByRole('img', { name: 'QR code to scan with the phone' });
    await qrImage.waitFor();
    expect(await qrImage.getAttribute('src')).to.match(/^data:image\/png;base64,/);
    expect(await page.locator('#session-status').textContent()).to.equal('waiting for the phone');
    await screenshot(page, '06-pairing-qr-phone');

    await page.getByText('The code as text').click();
    const qr = (await page.locator('#qr-string').textContent())?.trim() ?? '';
    expect(qr).not.to.equal('');
    const scan = await t.api('POST', `/sandbox/phones/${paired.phone}/scan`, { token: account.jwt, body: { qr } });
    expect(scan.status).to.equal(200);

    const navigations: string[] = [];
    page.on('framenavigated', (frame) => navigations.push(frame.url()));
    await page.locator('#session-status', { hasText: /^connected$/ }).waitFor({ timeout: 10_000 });
    expect(navigations, 'no reload').to.deep.equal([]);
    expect(await qrImage.count()).to.equal(0);
    expect(await page.getByRole('status').first().textContent()).to.include(`+${paired.phone}`);
    await screenshot(page, '07-connected-phone');
  });

  it('configures the webhook from the page; a message from another phone arrives signed with the secret it shows', async () => {
    await page.getByLabel('URL that receives the events').fill('not a url');
    await page.getByRole('button', { name: 'Save webhook' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).to.match(/webhook/i);

    await page.getByLabel('URL that receives the events').fill(receiver.url);
    await page.getByRole('checkbox', { name: 'Message', exact: true }).check();
    await page.getByRole('checkbox', { name: 'Connected', exact: true }).check();
    await page.getByRole('button', { name: 'Save webhook' }).click();
    await page.getByText('Webhook saved.').waitFor();
    const stored = await t.api('GET', `/instances/${instanceId}/webhook`, { token: account.jwt });
    expect(stored.body.data).to.include({ webhook: receiver.url, events: 'Connected,Message' });

    await page.getByRole('button', { name: 'Show signing secret' }).click();
    const secret = (await page.locator('#webhook-secret').textContent()) ?? '';
    expect(secret).to.equal(stored.body.data.secret);
    await screenshot(page, '08-webhook-phone');

    const friend = await newPhone(t.api, account, { push_name: 'A customer' });
    const sent = await t.api('POST', `/sandbox/phones/${friend.phone}/messages`, { token: account.jwt, body: { to: paired.phone, text: 'hello from the app test' } });
    expect(sent.status).to.equal(201);
    await waitFor(() => receiver.ofType('Message').length > 0, 'the Message delivery', 10_000);
    const [delivery] = receiver.ofType('Message');
    expect(delivery?.body.instance_id).to.equal(instanceId);
    expect(delivery?.body.event.Info.ID).to.equal(sent.body.message_id);
    expect(verifies(secret, delivery!)).to.equal(true);
  });

  it('shows a failed delivery in the log under its filter, and the Retry button delivers it', async () => {
    receiver.respond = () => 400;
    const friend = await newPhone(t.api, account, { push_name: 'Another customer' });
    const sent = await t.api('POST', `/sandbox/phones/${friend.phone}/messages`, { token: account.jwt, body: { to: paired.phone, text: 'refused at first' } });
    expect(sent.status).to.equal(201);
    await page.getByLabel('Show').selectOption('failed');
    const failed = page.locator('.deliveries li', { hasText: 'failed' });
    await failed.waitFor({ timeout: 10_000 });
    expect(await page.locator('.deliveries li').count()).to.equal(1);
    expect(await failed.textContent()).to.include('last answer 400');
    await screenshot(page, '09-delivery-failed-phone');

    receiver.respond = () => 200;
    const deliveryId = (await failed.getAttribute('data-delivery')) as string;
    await failed.getByRole('button', { name: /^Retry delivery/ }).click();
    await page.getByText(`Delivery ${deliveryId} is pending again.`).waitFor();
    await waitFor(() => receiver.received.some((r) => r.body.id === deliveryId), 'the retried delivery', 10_000);
    await page.getByLabel('Show').selectOption('delivered');
    await page.locator(`.deliveries li[data-delivery="${deliveryId}"]`, { hasText: 'delivered' }).waitFor({ timeout: 10_000 });
    await page.getByLabel('Show').selectOption('failed');
    await page.getByText('No deliveries failed.').waitFor();
  });

  it('keeps the page usable on a phone: nothing wider than the screen', async () => {
    const overflow = await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    if (overflow !== 0) await screenshot(page, 'overflow-phone');
    expect(overflow, 'pixels wider than the screen').to.equal(0);
  });
});
