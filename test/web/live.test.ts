/* eslint-disable @typescript-eslint/no-explicit-any -- stream bodies are read field by field */
import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { newAccount, newInstance, startTestGateway, type TestAccount, type TestGateway } from '../support/gateway.js';
import { newPhone, nextPhone, pairByQr, waitFor } from '../support/sandbox.js';
import { Receiver } from '../webhooks/support/receiver.js';
import { DESKTOP, openApp, screenshot, signIn } from './browser.js';
import { StreamProxy } from './stream-proxy.js';

/** Longer than any interval the page used to poll at (1.5 s status, 2 s inbox, 3 s log). */
const QUIET_MS = 3500;

/**
 * The instance page lives by the realtime stream: it reads when an event says something changed,
 * never on a timer while the socket is up. The page is served through a relay so the test can
 * cut its socket as the server side would, and see it come back and resume.
 */
describe('web app: live by the realtime stream, not by polling (in chromium)', function () {
  this.timeout(90_000);
  let t: TestGateway;
  let proxy: StreamProxy;
  let receiver: Receiver;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let account: TestAccount;
  let instanceId: string;
  let paired: string;
  const reads: { at: number; path: string }[] = [];
  const sockets: { url: string; frames: { at: number; body: any }[] }[] = [];

  /** The page's reads of what the stream keeps current (not its own actions, not assets). */
  const readsSince = (since: number) => reads.filter((r) => r.at >= since).map((r) => r.path);
  const framesOf = (type: string) => sockets.flatMap((s) => s.frames).filter((f) => f.body.type === type);
  /** Waits until the page has read nothing for a while: the reads an event asked for are over. */
  const settled = async () => {
    await waitFor(() => Date.now() - (reads[reads.length - 1]?.at ?? 0) > 2000, 'the page to settle', 15_000);
  };

  before(async () => {
    t = await startTestGateway({ MESSAGING_NETWORK: 'sandbox' });
    proxy = await new StreamProxy(Number(new URL(t.gateway.url).port)).start();
    receiver = await new Receiver().start();
    ({ browser, context, page } = await openApp(DESKTOP));
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (request.method() === 'GET' && /^\/(instances|sandbox)\//.test(url.pathname)) reads.push({ at: Date.now(), path: url.pathname + url.search });
    });
    page.on('websocket', (ws) => {
      const socket = { url: ws.url(), frames: [] as { at: number; body: any }[] };
      sockets.push(socket);
      ws.on('framereceived', (frame) => socket.frames.push({ at: Date.now(), body: JSON.parse(String(frame.payload)) }));
    });
    account = await newAccount(t.api);
    instanceId = (await newInstance(t.api, account, { name: 'Live desk' })).id;
    await signIn(page, proxy.url, account);
    await page.goto(`${proxy.url}/app/instances/${instanceId}`);
    await page.locator('#live-state', { hasText: /^live$/ }).waitFor({ timeout: 10_000 });
    await page.locator('#session-status', { hasText: /^not connected$/ }).waitFor();
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await proxy?.stop();
    await receiver?.stop();
    await t?.stop();
  });

  it('opens one stream with the session cookie only (no token in the URL)', () => {
    expect(sockets).to.have.length(1);
    expect(sockets[0]?.url).to.equal(`${proxy.url.replace('http', 'ws')}/instances/${instanceId}/events/ws`);
  });

  it('turns "connected" when the stream says so, with no read before the event', async () => {
    await settled();
    const quietFrom = Date.now();
    await page.waitForTimeout(QUIET_MS);
    expect(readsSince(quietFrom), 'reads while nothing happened').to.deep.equal([]);

    paired = (await newPhone(t.api, account, { push_name: 'Desk phone' })).phone;
    await pairByQr(t.api, account, instanceId, paired);
    await page.locator('#session-status', { hasText: /^connected$/ }).waitFor({ timeout: 10_000 });
    const [connected] = framesOf('Connected');
    expect(connected, 'the Connected event on the page socket').to.not.equal(undefined);
    const statusReads = reads.filter((r) => r.at >= quietFrom && r.path.endsWith('/session/status'));
    expect(statusReads.length).to.be.greaterThan(0);
    expect(statusReads.every((r) => r.at >= (connected?.at ?? Infinity)), 'status read only after the event').to.equal(true);
    expect(await page.locator('#session-title + p').textContent()).to.include(`+${paired}`);
  });

  it('shows a new delivery, its failed attempt and its retry delivered, without polling the log', async () => {
    const set = await t.api('POST', `/instances/${instanceId}/webhook`, { token: account.jwt, body: { webhookURL: receiver.url, events: 'Message' } });
    expect(set.status, set.text).to.equal(200);
    let refuse = true;
    receiver.respond = () => (refuse ? 503 : 200);
    await settled();
    const quietFrom = Date.now();
    await page.waitForTimeout(QUIET_MS);
    expect(readsSince(quietFrom), 'reads while nothing happened').to.deep.equal([]);

    const customer = await newPhone(t.api, account, { push_name: 'Customer' });
    const sent = await t.api('POST', `/sandbox/phones/${customer.phone}/messages`, { token: account.jwt, body: { to: paired, text: 'live log please' } });
    expect(sent.status).to.equal(201);
    const row = page.locator('.deliveries li', { hasText: 'Message' });
    await row.filter({ hasText: 'last answer 503' }).waitFor({ timeout: 10_000 });
    expect(await row.textContent()).to.include('pending');
    const frame = framesOf('Message').find((f) => f.body.event.Info.ID === sent.body.message_id);
    expect(frame, 'the Message on the page socket').to.not.equal(undefined);
    expect(readsSince(quietFrom).length).to.be.greaterThan(0);
    expect(reads.filter((r) => r.at >= quietFrom).every((r) => r.at >= (frame?.at ?? Infinity)), 'log read only after the event').to.equal(true);
    expect(await row.getAttribute('data-delivery')).to.equal(frame?.body.id);

    // The gateway retries on its own; the page reads again when the log said the attempt is due.
    refuse = false;
    await row.filter({ hasText: 'delivered' }).waitFor({ timeout: 15_000 });
    expect(await row.textContent()).to.match(/\d+ attempts · last answer 200/);
    await screenshot(page, '20-live-delivery-retried');
  });

  it('shows what the instance sends in the sandbox phone inbox, read on the event', async () => {
    const mine = nextPhone();
    await page.getByLabel('New phone: number with country code').fill(`+${mine}`);
    await page.getByLabel('Its name').fill('Inbox phone');
    await page.getByRole('button', { name: 'Create phone' }).click();
    await page.getByText(`Phone +${mine} created.`).waitFor();
    await page.getByText('Nothing received yet.').waitFor();
    await settled();
    const quietFrom = Date.now();
    await page.waitForTimeout(QUIET_MS);
    expect(readsSince(quietFrom), 'reads while nothing happened').to.deep.equal([]);

    const reply = await t.api('POST', `/instances/${instanceId}/chat/send/text`, { token: account.jwt, body: { phone: mine, message: 'straight to the inbox' } });
    expect(reply.status, reply.text).to.equal(200);
    await page.locator('.inbox li', { hasText: 'straight to the inbox' }).waitFor({ timeout: 10_000 });
    const frame = framesOf('Message').find((f) => f.body.event.Info.IsFromMe === true && JSON.stringify(f.body.event.Message).includes('straight to the inbox'));
    expect(frame).to.not.equal(undefined);
    const inboxReads = reads.filter((r) => r.at >= quietFrom && r.path === `/sandbox/phones/${mine}/inbox`);
    expect(inboxReads.length).to.be.greaterThan(0);
    expect(inboxReads.every((r) => r.at >= (frame?.at ?? Infinity)), 'inbox read only after the event').to.equal(true);
  });

  it('reconnects a socket the server side dropped, reads by hand only while it is down, and replays what it missed', async () => {
    proxy.refuseStreams = true;
    expect(proxy.dropStreams()).to.equal(1);
    await page.locator('#live-state', { hasText: /^reconnecting/ }).waitFor({ timeout: 5000 });
    const downFrom = Date.now();
    const friend = await newPhone(t.api, account, { push_name: 'While down' });
    const sent = await t.api('POST', `/sandbox/phones/${friend.phone}/messages`, { token: account.jwt, body: { to: paired, text: 'sent while the socket was down' } });
    expect(sent.status).to.equal(201);
    await page.waitForTimeout(QUIET_MS);
    const whileDown = readsSince(downFrom);
    expect(whileDown.some((p) => p.endsWith('/session/status')), `polls while down: ${whileDown.join(', ')}`).to.equal(true);
    expect(proxy.upgradesSeen, 'reconnect attempts while refused').to.be.greaterThan(1);

    const before = sockets.length;
    proxy.refuseStreams = false;
    await page.locator('#live-state', { hasText: /^live$/ }).waitFor({ timeout: 30_000 });
    const resumed = sockets[sockets.length - 1];
    expect(sockets.length).to.be.greaterThan(before);
    const lastSeqBefore = Math.max(...sockets.slice(0, 1).flatMap((s) => s.frames.map((f) => f.body.seq)));
    expect(resumed?.url).to.match(new RegExp(`/instances/${instanceId}/events/ws\\?after_seq=${lastSeqBefore}$`));
    // The event of the downtime comes again on the new socket: nothing is lost.
    await waitFor(() => resumed?.frames.some((f) => f.body.event?.Info?.ID === sent.body.message_id) === true, 'the missed Message replayed', 10_000);

    // Up again: the polling stops.
    await settled();
    const quietFrom = Date.now();
    await page.waitForTimeout(QUIET_MS);
    expect(readsSince(quietFrom), 'reads once the socket is back').to.deep.equal([]);
    await screenshot(page, '21-live-instance-desktop');
  });
});
