import { expect } from 'chai';
import { newInstance } from '../support/gateway.js';
import { startNats, type NatsServer } from '../servers/brokers/nats.js';
import { screenshot, useSignedInApp } from './browser.js';

describe('web app: the event export on the instance page (in chromium, against nats-server)', function () {
  this.timeout(120_000);
  let nats: NatsServer;
  // Started before the gateway the fixture starts, which is pointed at it.
  before(async () => {
    nats = await startNats();
  });
  const { t, owner: account, page } = useSignedInApp(() => ({ MESSAGING_NETWORK: 'sandbox', EXPORT_NATS_URL: nats.url }));
  let id: string;

  before(async () => {
    ({ id } = await newInstance(t.api, account, { name: 'Exported desk' }));
    await page.goto(`${t.gateway.url}/app/instances/${id}`);
    await page.getByRole('heading', { name: 'Event export' }).waitFor();
  });
  after(async () => {
    await nats?.dispose();
  });

  it('turns the export on for the chosen types, shows each broker, and stops it', async () => {
    const section = page.locator('section[aria-labelledby="export-title"]');
    await section.getByText('Not exporting').waitFor();
    await section.getByRole('cell', { name: 'NATS JetStream' }).waitFor();
    await section.getByRole('cell', { name: 'connected' }).waitFor();
    await section.getByLabel('Message').check();
    await section.getByLabel('ReadReceipt').check();
    await section.getByRole('button', { name: 'Save export' }).click();
    await section.getByText('Exporting Message, ReadReceipt').waitFor();
    expect((await t.api('GET', `/instances/${id}/export`, { token: account.jwt })).body.data.events).to.equal('Message,ReadReceipt');
    await screenshot(page, '30-export');

    await section.getByRole('button', { name: 'Stop export' }).click();
    await section.getByText('Export stopped.').waitFor();
    expect((await t.api('GET', `/instances/${id}/export`, { token: account.jwt })).body.data.events).to.equal('');
  });
});
