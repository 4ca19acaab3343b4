import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import { expectError, newAccount, newInstance, onTestServers, startTestGateway, type TestAccount, type TestGateway } from '../support/gateway.js';
import { ChatwootTestServer } from '../servers/chatwoot/chatwoot-test-server.js';
import { filesUnder } from '../support/files.js';

const FIELD_ORDER = [
  'id', 'instance_id', 'enabled', 'url', 'account_id', 'name_inbox', 'token_masked', 'inbox_id', 'inbox_identifier',
  'sign_msg', 'sign_delimiter', 'number', 'reopen_conversation', 'conversation_pending', 'import_contacts', 'import_messages',
  'days_limit_import_messages', 'organization', 'logo', 'ignore_jids', 'ignore_groups', 'webhook_url', 'created_at', 'updated_at', 'import_progress',
];

describe('helpdesk configuration over HTTP', () => {
  let t: TestGateway;
  let owner: TestAccount;
  let chatwoot: ChatwootTestServer;
  before(async () => {
    chatwoot = await new ChatwootTestServer().start();
    t = await startTestGateway();
    owner = await newAccount(t.api);
  });
  after(async () => {
    await t.stop();
    await chatwoot.close();
  });

  const save = (id: string, body: Record<string, unknown>, token = owner.jwt) => t.api('POST', `/instances/${id}/helpdesk`, { token, body });
  const base = () => ({ enabled: true, url: chatwoot.url, account_id: String(chatwoot.accountId), name_inbox: `inbox ${Math.random()}`, token: chatwoot.token });

  it('creates the API inbox, pushes the callback URL, and answers the spec fields in order with the token masked', async () => {
    const { id } = await newInstance(t.api, owner);
    const body = { ...base(), auto_create: true, sign_msg: true, ignore_jids: ['123@s.whatsapp.net'] };
    const res = await save(id, body);
    expect(res.status, res.text).to.equal(200);
    expect(Object.keys(res.body)).to.deep.equal(FIELD_ORDER);
    const inbox = chatwoot.inboxes.find((i) => i.name === body.name_inbox);
    expect(inbox, 'inbox created in the helpdesk').to.exist;
    expect(res.body).to.include({ instance_id: id, enabled: true, url: chatwoot.url, inbox_id: inbox?.id, inbox_identifier: inbox?.inbox_identifier, sign_msg: true });
    expect(res.body.token_masked).to.equal(`${chatwoot.token.slice(0, 4)}…${chatwoot.token.slice(-4)}`);
    expect(res.text).not.to.include(chatwoot.token);
    expect(res.body.webhook_url).to.match(new RegExp(`^${t.gateway.url.replace(/[.]/g, '\\.')}/helpdesk/webhook/[A-Za-z0-9_-]{40,}$`));
    expect(inbox?.webhook_url).to.equal(res.body.webhook_url);
    const read = await t.api('GET', `/instances/${id}/helpdesk`, { token: owner.jwt });
    expect(read.body).to.deep.equal(res.body);
  });

  it('finds an existing inbox by name, pushes the callback URL on every save, and keeps the token when it is omitted', async () => {
    const { id } = await newInstance(t.api, owner);
    const inbox = chatwoot.addInbox(`support ${Math.random()}`, 'https://old.example.com/hook');
    const first = await save(id, { ...base(), name_inbox: inbox.name });
    expect(first.status, first.text).to.equal(200);
    expect(first.body.inbox_id).to.equal(inbox.id);
    expect(inbox.webhook_url).to.equal(first.body.webhook_url);
    inbox.webhook_url = 'https://someone-changed-it.example.com/';
    const { token: _token, ...withoutToken } = { ...base(), name_inbox: inbox.name };
    const second = await save(id, { ...withoutToken, sign_delimiter: ' - ' });
    expect(second.status, second.text).to.equal(200);
    expect(second.body).to.include({ token_masked: first.body.token_masked, webhook_url: first.body.webhook_url, id: first.body.id, sign_delimiter: ' - ' });
    expect(inbox.webhook_url).to.equal(first.body.webhook_url);
    expect(second.body.created_at).to.equal(first.body.created_at);
  });

  it('refuses a first save without a token, an unknown inbox without auto_create, and a token the helpdesk refuses, storing nothing', async () => {
    const { id } = await newInstance(t.api, owner);
    const { token: _token, ...noToken } = base();
    const cases: [Record<string, unknown>, string][] = [
      [noToken, 'token'],
      [{ ...base(), name_inbox: 'no such inbox' }, 'name_inbox'],
      [{ ...base(), auto_create: true, token: 'wrong-token-of-some-length' }, 'token'],
      [{ ...base(), days_limit_import_messages: 0 }, 'days_limit_import_messages'],
      [{ ...base(), account_id: 'seven' }, 'account_id'],
      [{ ...base(), url: 'ftp://helpdesk.example.com' }, 'url'],
      [{ ...base(), surprise: true }, 'surprise'],
    ];
    for (const [body, field] of cases) {
      const res = await save(id, body);
      expectError(res, 400, 'invalid_input');
      expect(res.body.error.details.map((d: { field: string }) => d.field), JSON.stringify(body)).to.include(field);
    }
    expectError(await t.api('GET', `/instances/${id}/helpdesk`, { token: owner.jwt }), 404, 'not_found');
  });

  it('answers 502 when the helpdesk cannot be reached, and stores nothing', async () => {
    const { id } = await newInstance(t.api, owner);
    const res = await save(id, { ...base(), url: 'http://127.0.0.1:9', auto_create: true });
    expectError(res, 502, 'upstream_failed');
    expectError(await t.api('GET', `/instances/${id}/helpdesk`, { token: owner.jwt }), 404, 'not_found');
  });

  it('keeps the token and the inbox secret out of the events, the read models and every data file', async () => {
    const { id } = await newInstance(t.api, owner);
    const res = await save(id, { ...base(), auto_create: true });
    expect(res.status).to.equal(200);
    const secret = chatwoot.inboxes.find((i) => i.id === res.body.inbox_id)?.secret as string;
    const path = (res.body.webhook_url as string).split('/').pop() as string;
    const log = JSON.stringify(await t.gateway.events.readAll(), (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
    for (const value of [chatwoot.token, secret, path]) expect(log).not.to.include(value);
    // The data files are the embedded stores': with a backend on a test server, the log check above is the one.
    if (onTestServers()) return;
    let plainSeen = false;
    for (const file of await filesUnder(t.dataDir)) {
      const bytes = await readFile(file);
      for (const value of [chatwoot.token, secret, path]) expect(bytes.includes(Buffer.from(value)), `${value} in ${file}`).to.equal(false);
      plainSeen ||= bytes.includes(Buffer.from(res.body.name_inbox as string));
    }
    // The files are searchable as they are: what is not a secret is found in them.
    expect(plainSeen, 'the inbox name is stored in plain').to.equal(true);
  });

  it('removes the configuration: 204, then 404, and a new configuration gets a new callback URL', async () => {
    const { id } = await newInstance(t.api, owner);
    const first = await save(id, { ...base(), auto_create: true });
    const removed = await t.api('DELETE', `/instances/${id}/helpdesk`, { token: owner.jwt });
    expect(removed.status).to.equal(204);
    expectError(await t.api('GET', `/instances/${id}/helpdesk`, { token: owner.jwt }), 404, 'not_found');
    expectError(await t.api('DELETE', `/instances/${id}/helpdesk`, { token: owner.jwt }), 404, 'not_found');
    const again = await save(id, { ...base(), auto_create: true });
    expect(again.status).to.equal(200);
    expect(again.body.webhook_url).not.to.equal(first.body.webhook_url);
    expect(again.body.id).not.to.equal(first.body.id);
  });

  it("is the owner's JWT only: another account is refused, the token pair is not accepted", async () => {
    const { id, token } = await newInstance(t.api, owner);
    const other = await newAccount(t.api);
    expectError(await save(id, { ...base(), auto_create: true }, other.jwt), 403, 'forbidden');
    const pair = await t.api('GET', `/instances/${id}/helpdesk`, { headers: { 'x-instance-token': token, 'x-client-token': owner.clientToken } });
    expect(pair.status).to.equal(401);
  });
});

describe('helpdesk configuration with outbound safety on', () => {
  let t: TestGateway;
  let owner: TestAccount;
  before(async () => {
    t = await startTestGateway({ ALLOW_PRIVATE_TARGETS: 'false' });
    owner = await newAccount(t.api);
  });
  after(async () => t.stop());

  it('refuses http and private helpdesk addresses', async () => {
    const { id } = await newInstance(t.api, owner);
    for (const url of ['http://helpdesk.example.com', 'https://127.0.0.1', 'https://[::1]', 'https://10.1.2.3', 'https://metadata.google.internal']) {
      const res = await t.api('POST', `/instances/${id}/helpdesk`, { token: owner.jwt, body: { enabled: true, url, account_id: '1', name_inbox: 'x', token: 'abcdefghijklmnop' } });
      expectError(res, 400, 'invalid_input');
      expect(res.body.error.details[0].field).to.equal('url');
    }
  });
});
