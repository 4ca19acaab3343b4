/* eslint-disable @typescript-eslint/no-explicit-any -- answers are read field by field */
import { join } from 'node:path';
import { expect } from 'chai';
import { OpenAiTestServer } from '../servers/bots/openai-test-server.js';
import { newInstance } from '../support/gateway.js';
import { newPhone, pairByQr, waitFor } from '../support/sandbox.js';
import { DESKTOP, PHONE, SCREENSHOTS, screenshot, useSignedInApp } from './browser.js';

describe('web app: bots on the instance page (in chromium)', function () {
  this.timeout(180_000);
  const { t, owner: account, page } = useSignedInApp({ MESSAGING_NETWORK: 'sandbox' });
  const openai = new OpenAiTestServer();
  before(async () => {
    await openai.start();
  });
  after(async () => {
    await openai.close();
  });

  it('saves an OpenAI-compatible bot with its key shown masked, and lists it', async () => {
    const { id } = await newInstance(t.api, account, { name: 'Bot desk' });
    await page.goto(`${t.gateway.url}/app/instances/${id}`);
    const section = page.locator('section[aria-labelledby="bots-title"]');
    await section.getByText('No bots yet.').waitFor();
    await section.getByLabel('Bot id').fill('helper');
    await section.getByLabel('Server URL').fill('http://127.0.0.1:9/v1');
    await section.getByLabel('Model').fill('tiny');
    await section.getByLabel('API key').fill('sk-web-0123456789abcd');
    await section.getByLabel('Stop keyword').fill('stop');
    await section.getByLabel("Vision: send contacts' images too").check();
    await section.getByRole('button', { name: 'Save bot' }).click();
    await section.getByText('Bot helper saved.').waitFor();
    await section.getByRole('cell', { name: 'sk-w…abcd' }).waitFor();
    expect((await t.api('GET', `/instances/${id}/bots/helper`, { token: account.jwt })).body.data).to.include({ model: 'tiny', stop_keyword: 'stop', vision: true });
    await section.getByRole('button', { name: 'Conversations of helper' }).click();
    await section.getByText('No conversations yet.').waitFor();
  });

  it("pauses a conversation from the Bots section (the bot then stays quiet) and resumes it; screenshots desktop and phone", async () => {
    const { id } = await newInstance(t.api, account, { name: 'Bot pause' });
    const me = await newPhone(t.api, account);
    const customer = await newPhone(t.api, account, { push_name: 'Rui' });
    await pairByQr(t.api, account, id, me.phone);
    const saved = await t.api('POST', `/instances/${id}/bots/ai`, { token: account.jwt, body: { kind: 'openai', url: `${openai.url}/v1`, model: 'tiny', api_key: openai.apiKey, delay_ms: 0 } });
    expect(saved.status, saved.text).to.equal(200);
    const say = async (text: string) => {
      const r = await t.api('POST', `/sandbox/phones/${customer.phone}/messages`, { token: account.jwt, body: { to: me.phone, text } });
      expect(r.status, r.text).to.equal(201);
    };
    const answers = async () =>
      ((await t.api('GET', `/sandbox/phones/${customer.phone}/inbox`, { token: account.jwt })).body.messages as any[]).filter((m) => !m.from_me).map((m) => m.text);
    const session = async () => ((await t.api('GET', `/instances/${id}/bots/ai/sessions`, { token: account.jwt })).body.data as any[])[0];
    const settled = async () => (await t.gateway.docs.collection('bot_jobs').count({ instance_id: id, state: 'pending' })) === 0;

    await say('hello bot');
    await waitFor(async () => (await answers()).length === 1, 'the bot answers', 60_000);

    await page.goto(`${t.gateway.url}/app/instances/${id}`);
    const section = page.locator('section[aria-labelledby="bots-title"]');
    await section.getByRole('button', { name: 'Conversations of ai' }).click();
    const row = section.getByRole('row').filter({ hasText: `+${customer.phone}` });
    await row.getByText('active', { exact: true }).waitFor();
    await section.getByRole('button', { name: `Pause ${customer.jid}` }).click();
    await row.getByText('paused (by operator)', { exact: true }).waitFor();
    await row.getByText('1 exchange', { exact: true }).waitFor();
    expect(await session()).to.include({ jid: customer.jid, status: 'paused', paused_by: 'operator' });

    await say('are you there?');
    await waitFor(settled, 'the message judged', 60_000);
    expect(await answers()).to.deep.equal(['You said: hello bot (1 messages of context)']);

    await screenshot(page, 'bots-paused-desktop');
    await section.screenshot({ path: join(SCREENSHOTS, 'bots-section-desktop.png') });
    await page.setViewportSize(PHONE.viewport);
    await screenshot(page, 'bots-paused-phone');
    await section.screenshot({ path: join(SCREENSHOTS, 'bots-section-phone.png') });
    // Nothing in the section is wider than the phone's screen (tables scroll inside it).
    const overflow = (await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')) as number;
    expect(overflow, 'the page scrolls sideways on a phone').to.be.at.most(0);
    // The operator's button is on the phone's screen, not scrolled off to the side of its table.
    const resume = await section.getByRole('button', { name: `Resume ${customer.jid}` }).boundingBox();
    expect(resume && resume.x + resume.width, 'the Resume button on a phone').to.be.at.most(PHONE.viewport.width);
    await page.setViewportSize(DESKTOP.viewport);

    await section.getByRole('button', { name: `Resume ${customer.jid}` }).click();
    await row.getByText('active', { exact: true }).waitFor();
    expect(await session()).to.include({ status: 'active', paused_by: null });
    await say('back again');
    await waitFor(async () => (await answers()).length === 2, 'the bot answers again', 60_000);
    expect((await answers())[1]).to.match(/^You said: back again/);
  });
});
