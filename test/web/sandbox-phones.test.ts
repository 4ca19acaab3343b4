import { expect } from 'chai';
import sharp from 'sharp';
import { newInstance } from '../support/gateway.js';
import { nextPhone, waitFor } from '../support/sandbox.js';
import { Receiver } from '../webhooks/support/receiver.js';
import { screenshot, useSignedInApp } from './browser.js';

/** The README's newcomer path with no tool but the browser: phones simulated on the page. */
describe('web app: the sandbox phone simulator (in chromium)', function () {
  this.timeout(60_000);
  const { t, owner: account, page } = useSignedInApp({ MESSAGING_NETWORK: 'sandbox' });
  let receiver: Receiver;

  before(async () => {
    receiver = await new Receiver().start();
  });
  after(async () => {
    await receiver.stop();
  });

  it('pairs with a simulated phone, and a message from another reaches the webhook; the inbox shows the reply', async () => {
    const instance = await newInstance(t.api, account, { name: 'Tried in the sandbox' });
    await page.goto(`${t.gateway.url}/app/instances/${instance.id}`);
    await page.getByLabel('URL that receives the events').fill(receiver.url);
    await page.getByRole('checkbox', { name: 'All', exact: true }).check();
    await page.getByRole('button', { name: 'Save webhook' }).click();
    await page.getByText('Webhook saved.').waitFor();

    const mine = nextPhone();
    const customer = nextPhone();
    for (const [phone, name] of [[mine, 'My phone'], [customer, 'A customer']] as const) {
      await page.getByLabel('New phone: number with country code').fill(`+${phone}`);
      await page.getByLabel('Its name').fill(name);
      await page.getByRole('button', { name: 'Create phone' }).click();
      await page.getByText(`Phone +${phone} created.`).waitFor();
    }
    await page.getByRole('button', { name: 'Pair a phone' }).click();
    await page.getByRole('img', { name: 'QR code to scan with the phone' }).waitFor();
    await page.getByRole('button', { name: `Scan this instance's QR with +${mine}` }).click();
    await page.locator('#session-status', { hasText: /^connected$/ }).waitFor({ timeout: 10_000 });
    await waitFor(() => receiver.ofType('Connected').length === 1, 'Connected delivered', 10_000);

    await page.getByLabel('From').selectOption(customer);
    await page.getByLabel('To (number with country code)').fill(`+${mine}`);
    await page.getByLabel('Text').fill('is the shop open?');
    await page.getByRole('button', { name: 'Send from the phone' }).click();
    await page.getByText(`Sent from +${customer}.`).waitFor();
    await waitFor(() => receiver.ofType('Message').some((r) => JSON.stringify(r.body.event.Message).includes('is the shop open?')), 'the Message delivery', 10_000);

    const reply = await t.api('POST', `/instances/${instance.id}/chat/send/text`, { token: account.jwt, body: { phone: customer, message: 'yes, until six' } });
    expect(reply.status, reply.text).to.equal(200);
    await page.getByLabel('Phone', { exact: true }).selectOption(customer);
    await page.locator('.inbox li', { hasText: 'yes, until six' }).waitFor({ timeout: 10_000 });
    // The delivery log follows without a reload.
    await page.locator('.deliveries li', { hasText: 'Message' }).first().waitFor({ timeout: 10_000 });

    // Media from the phone: a picked image reaches the instance as an image, with its caption.
    const png = await sharp({ create: { width: 32, height: 32, channels: 3, background: { r: 20, g: 120, b: 200 } } }).png().toBuffer();
    await page.getByLabel('Or a file (image, video, audio or document)').setInputFiles({ name: 'shop.png', mimeType: 'image/png', buffer: png });
    await page.getByLabel('Caption').fill('our shop front');
    await page.getByRole('button', { name: 'Send from the phone' }).click();
    await page.getByText(`Sent from +${customer}.`).waitFor();
    await waitFor(() => receiver.ofType('Message').some((r) => r.body.event.Message?.imageMessage?.caption === 'our shop front'), 'the image delivery', 10_000);
    // And media from the instance reaches the phone's inbox.
    const image = await t.api('POST', `/instances/${instance.id}/chat/send/image`, { token: account.jwt, body: { phone: customer, media: { data: png.toString('base64') } } });
    expect(image.status, image.text).to.equal(200);
    await page.locator('.inbox li', { hasText: '(image)' }).waitFor({ timeout: 10_000 });
    await screenshot(page, '14-sandbox-phones');
  });
});
