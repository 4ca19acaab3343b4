import { expect } from 'chai';
import { newAccount, newInstance, startTestGateway, type Answer, type TestGateway } from '../support/gateway.js';
import { startEventStoreTestServer, type EventStoreTestServer } from '../servers/eventstore/server.js';
import { waitFor } from '../support/sandbox.js';

describe('gateway on the EventStoreDB adapter (gRPC test server)', () => {
  let server: EventStoreTestServer;
  let t: TestGateway | undefined;

  beforeEach(async () => {
    server = await startEventStoreTestServer();
  });

  afterEach(async () => {
    await t?.stop();
    t = undefined;
    await server.close();
  });

  it('signs up, creates an instance and reads it back, with every event in EventStoreDB', async () => {
    t = await startTestGateway({ EVENTSTORE_URL: server.url });
    const owner = await newAccount(t.api);
    const created = await newInstance(t.api, owner, { name: 'Support line' });

    const read = await t.api('GET', `/instances/${created.id}`, { token: owner.jwt });
    expect(read.status).to.equal(200);
    expect(read.body).to.include({ id: created.id, name: 'Support line' });
    expect((await t.api('GET', '/account', { token: owner.jwt })).body.email).to.equal(owner.email);
    // Ready once every projection has caught up, the audit and helpdesk ones included.
    const api = t.api;
    await waitFor(async () => (await api('GET', '/ready')).status === 200, 'ready');

    const ours = server.log.all.filter((event) => !event.streamId.startsWith('$'));
    expect(ours.length).to.be.at.least(2);
    expect(ours.some((event) => event.streamId.includes(created.id))).to.equal(true);
    const stored = ours.map((event) => Buffer.from(event.data).toString('utf8') + Buffer.from(event.customMetadata).toString('utf8')).join('\n');
    for (const secret of [owner.password, owner.clientSecret, created.token]) expect(stored).not.to.include(secret);
  });

  it('rebuilds its read models from EventStoreDB alone on a node with an empty data dir', async () => {
    t = await startTestGateway({ EVENTSTORE_URL: server.url });
    const owner = await newAccount(t.api);
    const created = await newInstance(t.api, owner, { name: 'Kept in the log' });
    await t.stop();

    // A new node: a fresh DATA_DIR holds only the embedded document store, which starts empty,
    // and its own signing keys, so the owner signs in again (which needs the account's read model).
    t = await startTestGateway({ EVENTSTORE_URL: server.url });
    const api = t.api;
    await eventually(() => api('GET', '/ready'));
    const login = await api('POST', '/auth/login', { body: { email: owner.email, password: owner.password } });
    expect(login.status, login.text).to.equal(200);
    const read = await api('GET', `/instances/${created.id}`, { token: login.body.access_token });
    expect(read.status, read.text).to.equal(200);
    expect(read.body.name).to.equal('Kept in the log');
  });

  it('rides out an EventStoreDB outage: not ready while it is down, everything works again once it is back', async () => {
    t = await startTestGateway({ EVENTSTORE_URL: server.url });
    const owner = await newAccount(t.api);
    const before = await newInstance(t.api, owner, { name: 'before' });
    const port = Number(new URL(server.url.replace('esdb://', 'http://')).port);
    await server.close();

    expect((await t.api('GET', '/ready')).status).to.equal(503);
    const refused = await t.api('PUT', '/instances/create', { token: owner.jwt, body: { name: 'while down' } });
    expect(refused.status).to.be.at.least(500);

    server = await startEventStoreTestServer({ port, log: server.log });
    const api = t.api;
    await eventually(() => api('GET', '/ready'));
    const after = await newInstance(t.api, owner, { name: 'after' });
    const list = await t.api('GET', `/instances/${after.id}`, { token: owner.jwt });
    expect(list.body.name).to.equal('after');
    expect((await t.api('GET', `/instances/${before.id}`, { token: owner.jwt })).body.name).to.equal('before');
  });

  it('refuses to start when EVENTSTORE_URL is not an EventStoreDB connection string, without echoing it', async () => {
    const error = await startTestGateway({ EVENTSTORE_URL: 'http://user:hunter2@127.0.0.1:1' }).then(
      () => expect.fail('the gateway started'),
      (e: unknown) => e as Error,
    );
    expect(error.message).to.match(/EVENTSTORE_URL/);
    expect(error.message).not.to.include('hunter2');
  });
});

/** Retries until 200: the new node's projections replay the log after it starts listening. */
async function eventually(request: () => Promise<Answer>): Promise<Answer> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const answer = await request();
    if (answer.status === 200 || Date.now() > deadline) {
      expect(answer.status, answer.text).to.equal(200);
      return answer;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
