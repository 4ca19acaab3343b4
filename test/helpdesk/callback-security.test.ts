/* eslint-disable @typescript-eslint/no-explicit-any -- answers are read field by field */
import { expect } from 'chai';
import { capturedLogs } from '../support/captured-logs.js';
import { newAccount, newInstance, startTestGateway, type TestAccount, type TestGateway } from '../support/gateway.js';
import { waitFor } from '../support/sandbox.js';
import { ChatwootTestServer } from '../servers/chatwoot/chatwoot-test-server.js';

describe('helpdesk callback: what a forged, odd or replayed callback can do', function () {
  this.timeout(30_000);
  const logs = capturedLogs('info');
  let t: TestGateway;
  let chatwoot: ChatwootTestServer;
  let owner: TestAccount;
  let instanceId: string;
  let config: any;
  let secret: string;
  before(async () => {
    chatwoot = await new ChatwootTestServer().start();
    t = await startTestGateway({}, { logger: logs.logger });
    owner = await newAccount(t.api);
    instanceId = (await newInstance(t.api, owner)).id;
    const res = await t.api('POST', `/instances/${instanceId}/helpdesk`, {
      token: owner.jwt,
      body: { enabled: true, url: chatwoot.url, account_id: String(chatwoot.accountId), name_inbox: `WA ${instanceId}`, token: chatwoot.token, auto_create: true },
    });
    expect(res.status, res.text).to.equal(200);
    config = res.body;
    secret = (chatwoot.inboxes.find((i) => i.id === config.inbox_id) as any).secret;
  });
  after(async () => {
    await t.stop();
    await chatwoot.close();
  });

  const signed = (body: unknown, timestamp = String(Math.floor(Date.now() / 1000))) => {
    const text = JSON.stringify(body);
    return chatwoot.postToWebhook(config.webhook_url, text, { 'x-chatwoot-timestamp': timestamp, 'x-chatwoot-signature': ChatwootTestServer.sign(secret, timestamp, text) });
  };
  const reply = (extra: Record<string, unknown>) => ({
    event: 'message_created',
    id: 700_001,
    content: 'hi',
    message_type: 'outgoing',
    private: false,
    source_id: null,
    inbox: { id: config.inbox_id },
    conversation: { id: 41, inbox_id: config.inbox_id, contact_inbox: { source_id: 'x' }, meta: { sender: { phone_number: '+5511999990000', identifier: '5511999990000@s.whatsapp.net' } } },
    sender: { id: 1, name: 'Ana', type: 'user' },
    ...extra,
  });

  it('answers a signed callback whose attachments hold null, numbers or strings without a 500', async () => {
    for (const attachments of [[null], [1, 'x', true], [null, { data_url: 'https://example.com/a.png', file_type: 'image' }], 'not a list']) {
      const res = await signed(reply({ id: 700_100 + Math.floor(Math.random() * 1e6), attachments }));
      expect(res.status, `${JSON.stringify(attachments)}: ${res.body}`).to.be.oneOf([200, 400]);
    }
  });

  it('never writes the secret path into the log: the access line names the route template', async () => {
    const secretPath = (config.webhook_url as string).split('/').pop() as string;
    expect(secretPath.length).to.be.greaterThan(16);
    const access = () => logs.lines.filter((l) => l.msg === 'request' && String(l.path ?? l.route).startsWith('/helpdesk/webhook/'));
    const before = access().length;
    const res = await signed(reply({ id: 700_002, private: true }));
    expect(res.status, res.body).to.equal(200);
    // The wrong method on the secret path too.
    expect((await fetch(config.webhook_url)).status).to.equal(405);
    // Access lines are written in groups, a few milliseconds after their answers.
    await waitFor(() => access().length >= before + 2, 'the access lines of both requests');
    expect(access().every((l) => (l.path ?? l.route) === '/helpdesk/webhook/{path}')).to.equal(true);
    expect(logs.text()).not.to.include(secretPath);
  });

  it('records a status callback replayed three times once; another change is recorded', async () => {
    const statusChanges = async () => {
      const res = await t.api('GET', `/instances/${instanceId}/history?types=HelpdeskConversationStatusChanged&limit=100`, { token: owner.jwt });
      expect(res.status, res.text).to.equal(200);
      return (res.body.events as any[]).map((e) => e.data.status);
    };
    const resolved = { event: 'conversation_status_changed', id: 52, status: 'resolved', conversation: { id: 52, inbox_id: config.inbox_id }, changed_attributes: [{ status: { previous_value: 'open', current_value: 'resolved' } }] };
    const timestamp = String(Math.floor(Date.now() / 1000));
    for (let i = 0; i < 3; i++) expect((await signed(resolved, timestamp)).status).to.equal(200);
    expect((await signed({ ...resolved, status: 'open', changed_attributes: [{ status: { previous_value: 'resolved', current_value: 'open' } }] })).status).to.equal(200);
    // History is read from what the projections indexed: wait for the last change, then the
    // whole list is there, and the replays before it are in it once.
    await waitFor(async () => (await statusChanges()).includes('open'), 'the later change in the history');
    expect(await statusChanges()).to.deep.equal(['resolved', 'open']);
  });
});
