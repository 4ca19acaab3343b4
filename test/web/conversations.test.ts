/* eslint-disable @typescript-eslint/no-explicit-any -- answers are read field by field */
import { expect } from 'chai';
import sharp from 'sharp';
import { pairedInstance, phoneSends } from '../support/chats.js';
import { newPhone, waitFor } from '../support/sandbox.js';
import { openApp, PHONE, screenshot, signIn, useSignedInApp } from './browser.js';

/**
 * The Conversations view end to end in chromium: a phone writes, the message appears without a
 * reload (the realtime stream), the operator answers with text and with an image, and the
 * phone's inbox has both. Also on a phone-sized screen.
 */
describe('web app: conversations (in chromium)', function () {
  this.timeout(90_000);
  const { t, owner, page } = useSignedInApp({ MESSAGING_NETWORK: 'sandbox' });
  let me: { id: string; phone: string; jid: string };
  let customer: { phone: string; jid: string };
  let png: Buffer;

  const inbox = async (phone: string) => (await t.api('GET', `/sandbox/phones/${phone}/inbox`, { token: owner.jwt })).body.messages as any[];

  before(async () => {
    me = await pairedInstance(t, owner);
    customer = await newPhone(t.api, owner, { push_name: 'Customer Ana' });
    png = await sharp({ create: { width: 80, height: 60, channels: 3, background: { r: 230, g: 120, b: 20 } } }).png().toBuffer();
  });

  it('shows a message as the phone writes it, and sends the operator\'s text and image answers to the phone', async () => {
    await page.goto(`${t.gateway.url}/app/instances/${me.id}`);
    await page.getByRole('link', { name: 'Conversations →' }).click();
    await page.getByRole('heading', { name: 'Conversations', level: 1 }).waitFor();
    await page.locator('#live-state', { hasText: /^live$/ }).waitFor({ timeout: 10_000 });
    await page.getByText('No chat yet').waitFor();

    // The phone writes: the chat appears in the list, no reload.
    const first = await phoneSends(t, owner, customer.phone, me.phone, { text: 'Hi! Is my order ready?' });
    const chat = page.getByRole('list', { name: 'Chats' }).getByRole('button', { name: /Customer Ana|\+/ });
    await chat.first().waitFor({ timeout: 10_000 });
    await page.getByRole('list', { name: 'Chats' }).getByText('Hi! Is my order ready?').waitFor({ timeout: 10_000 });
    await chat.first().click();
    const thread = page.getByRole('list', { name: /^Messages with/ });
    await thread.locator(`[data-message-id="${first}"]`, { hasText: 'Hi! Is my order ready?' }).waitFor();

    // Another message while the chat is open: it appears in the thread, no reload.
    const second = await phoneSends(t, owner, customer.phone, me.phone, { text: 'Order 1234' });
    await thread.locator(`[data-message-id="${second}"]`, { hasText: 'Order 1234' }).waitFor({ timeout: 10_000 });

    // The operator answers with text, quoting the first message.
    await thread.locator(`[data-message-id="${first}"]`).getByRole('button', { name: 'Reply to this message' }).click();
    await page.getByLabel('Message', { exact: true }).fill('Yes, it is ready to collect.');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    const answered = thread.locator('.bubble.out', { hasText: 'Yes, it is ready to collect.' });
    await answered.waitFor({ timeout: 10_000 });
    await answered.locator('.quote', { hasText: 'Is my order ready?' }).waitFor();
    await answered.locator('.tick').waitFor();

    // And with an image.
    await page.getByLabel('Attach an image or a document').setInputFiles({ name: 'receipt.png', mimeType: 'image/png', buffer: png });
    await page.getByLabel('Message', { exact: true }).fill('your receipt');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    const picture = thread.locator('.bubble.out', { hasText: 'your receipt' });
    await picture.locator('img.picture').waitFor({ timeout: 10_000 });

    // The phone has both.
    await waitFor(async () => {
      const items = await inbox(customer.phone);
      return items.some((m) => m.type === 'text' && m.text === 'Yes, it is ready to collect.' && m.reply_to === first) && items.some((m) => m.type === 'image' && m.caption === 'your receipt');
    }, "the phone's inbox has both answers");
    const image = (await inbox(customer.phone)).find((m) => m.type === 'image' && m.caption === 'your receipt');
    const bytes = await fetch(`${t.gateway.url}/sandbox/phones/${customer.phone}/inbox/${image.message_id}/media`, { headers: { authorization: `Bearer ${owner.jwt}` } });
    expect(Buffer.from(await bytes.arrayBuffer()).equals(png)).to.equal(true);
    await screenshot(page, '20-conversations');
  });

  it('is usable on a phone-sized screen: the list, then the thread with a way back', async () => {
    const { browser, context, page: small } = await openApp(PHONE);
    try {
      await signIn(small, t.gateway.url, owner);
      await small.goto(`${t.gateway.url}/app/instances/${me.id}/conversations`);
      await small.getByRole('list', { name: 'Chats' }).getByRole('button').first().click();
      await small.getByRole('list', { name: /^Messages with/ }).locator('.bubble', { hasText: 'your receipt' }).locator('img.picture').waitFor({ timeout: 10_000 });
      expect(await small.getByRole('list', { name: 'Chats' }).isVisible()).to.equal(false);
      const overflow = (await small.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')) as number;
      expect(overflow, 'no sideways scrolling').to.be.at.most(0);
      await screenshot(small, '21-conversations-phone');
      await small.getByRole('button', { name: '← Chats' }).click();
      await small.getByRole('list', { name: 'Chats' }).waitFor();
      await small.getByLabel('Search chats and messages').fill('receipt');
      await small.getByRole('list', { name: 'Messages found' }).getByText('your receipt').waitFor({ timeout: 10_000 });
      await screenshot(small, '22-conversations-phone-search');
    } finally {
      await context.close();
      await browser.close();
    }
  });
});
