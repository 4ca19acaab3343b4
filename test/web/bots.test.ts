import { expect } from 'chai';
import { newInstance } from '../support/gateway.js';
import { useSignedInApp } from './browser.js';

describe('web app: bots on the instance page (in chromium)', function () {
  this.timeout(120_000);
  const { t, owner: account, page } = useSignedInApp({ MESSAGING_NETWORK: 'sandbox' });

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
    await section.getByRole('button', { name: 'Save bot' }).click();
    await section.getByText('Bot helper saved.').waitFor();
    await section.getByRole('cell', { name: 'sk-w…abcd' }).waitFor();
    expect((await t.api('GET', `/instances/${id}/bots/helper`, { token: account.jwt })).body.data).to.include({ model: 'tiny', stop_keyword: 'stop' });
    await section.getByRole('button', { name: 'Conversations of helper' }).click();
    await section.getByText('No conversations yet.').waitFor();
  });
});
